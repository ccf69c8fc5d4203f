-- bench.md W3 ESPHome text: plain-text payloads (`21.4`) on one topic per device, FORMAT="binary".
CREATE STREAM telem () WITH (FORMAT="binary");
SELECT meta(topic) AS topic, self AS state FROM telem
