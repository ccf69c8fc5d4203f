-- W3 with regular expressions: the ESPHome text workload, where each record goes through three
-- regexp functions and a LIKE (`bench/replay.ts w3 --rule bench/rules/w3-regex.sql`).
CREATE STREAM telem () WITH (FORMAT="binary");
SELECT meta(topic) AS topic,
       regexp_substr(meta(topic), "dev_[0-9]+") AS device,
       regexp_replace(meta(topic), "^bench/esphome/([^/]+)/sensor/(\\w+)/state$", "${2}@$1") AS sensor,
       self AS state
FROM telem
WHERE regexp_matches(meta(topic), "^bench/esphome/[^/]+/sensor/[a-z]+/state$") AND meta(topic) LIKE "bench/%/state"
