-- Readings above 30 degrees, with the device they came from (README: pipe mode).
SELECT device, temperature, temperature / humidity AS ratio
FROM telem
WHERE temperature > 30
