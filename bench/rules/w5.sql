-- bench.md W5 EV chargers: 2,000 devices, session windows (max 10 s, timeout 2 s).
SELECT device, count(*) AS n, max(speed) AS max_power FROM telem GROUP BY device, SESSIONWINDOW(ss, 10, 2)
