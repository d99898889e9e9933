-- A CRC-32 of each row's data (server/storage/checksum.ts), checked whenever a row is read: a row
-- damaged on disk is reported as a corrupt object instead of being served or decoded. Rows
-- already stored get theirs now (hearth_crc32 is registered by openDatabase); a row inserted
-- without one (NULL) is read unchecked.
ALTER TABLE events ADD COLUMN crc INTEGER;
ALTER TABLE objects ADD COLUMN crc INTEGER;
UPDATE events SET crc = hearth_crc32(data);
UPDATE objects SET crc = hearth_crc32(data);
