-- bench.md W1 telemetry filter (schemaless stream, as the MQTT workload declares it).
SELECT id, device, temp, speed * 3.6 AS speed_kmh FROM telem WHERE temp > 21.0
