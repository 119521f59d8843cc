-- Lets the dispatcher find gateway jobs whose job.processing event is not recorded yet.
CREATE INDEX webhook_event_source_idx ON webhook_event (source, event);
