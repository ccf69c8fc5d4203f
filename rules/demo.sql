-- The bundled demo: hot sensors, temperature in Fahrenheit, one row per hot reading.
CREATE STREAM demo (device STRING, temperature FLOAT, humidity FLOAT, ts BIGINT) WITH (FORMAT="JSON");

SELECT device, round(temperature * 1.8 + 32, 1) AS temp_f, humidity, ts
FROM demo
WHERE temperature > 25.0
