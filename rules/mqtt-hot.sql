-- The bundled live example: hot sensors read from an MQTT broker, printed as JSON lines until Ctrl-C.
--   floe run rules/mqtt-hot.sql                                   # broker tcp://127.0.0.1:1883
--   MQTT_SOURCE__DEFAULT__SERVER=tcp://broker:1883 floe run rules/mqtt-hot.sql
--   mosquitto_pub -t sensors/d1/telemetry -m '{"device":"d1","temperature":31.5,"humidity":40,"ts":1}'
CREATE STREAM sensors (device STRING, temperature FLOAT, humidity FLOAT, ts BIGINT)
  WITH (TYPE="mqtt", DATASOURCE="sensors/+/telemetry", FORMAT="JSON", CONF_KEY="default");

SELECT device, round(temperature * 1.8 + 32, 1) AS temp_f, humidity, meta(topic) AS topic
FROM sensors
WHERE temperature > 25.0
