-- bench.md W2 per-device windows: 1,000 devices, 10 s tumbling windows.
SELECT device, count(*) AS n, avg(temp) AS avg_temp, max(speed) AS max_speed FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)
