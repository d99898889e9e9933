-- Watch replay and "has this resource changed since rv?" read the log per resource in rv order.
CREATE INDEX events_by_resource ON events (res, rv);
