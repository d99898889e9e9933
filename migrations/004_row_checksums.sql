-- A CRC-32 of each row's data (server/storage/rows/checksum.ts), checked whenever a row is read: a row
-- damaged on disk is reported as a corrupt object instead of being served or decoded. Rows
-- already stored get theirs now (hearth_crc32 is registered by openDatabase), but a JSON row
-- (one starting with "{") that is no longer JSON gets -1, which no checksum equals: it is
-- reported, not blessed. A row inserted without one (NULL) is read unchecked.
ALTER TABLE events ADD COLUMN crc INTEGER;
ALTER TABLE objects ADD COLUMN crc INTEGER;
UPDATE events SET crc = CASE WHEN substr(data, 1, 1) = X'7B' AND NOT json_valid(CAST(data AS TEXT)) THEN -1 ELSE hearth_crc32(data) END;
UPDATE objects SET crc = CASE WHEN substr(data, 1, 1) = X'7B' AND NOT json_valid(CAST(data AS TEXT)) THEN -1 ELSE hearth_crc32(data) END;
