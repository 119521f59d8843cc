-- Which dispatcher made an attempt (operators; and the test that two dispatchers share the work).
ALTER TABLE webhook_attempt ADD COLUMN dispatcher text;
