-- Per-device count and average over 10-second tumbling windows (README: pipe mode, --replay).
SELECT device, count(*) AS n, avg(temperature) AS avg_temp
FROM telem
GROUP BY device, TUMBLINGWINDOW(ss, 10)
ORDER BY device
