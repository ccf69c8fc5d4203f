-- bench.md W4 vehicles: 10,000 keys, 10 s tumbling windows.
SELECT device, count(*) AS n, avg(speed) AS avg_speed, max(temp) AS max_temp FROM telem GROUP BY device, TUMBLINGWINDOW(ss, 10)
