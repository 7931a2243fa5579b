from celery.signals import worker_ready


@worker_ready.connect
def _heartbeat_on_start(sender, **kwargs):
    # A worker that has just started is alive before beat's first tick.
    from mica.jobs.services import worker_heartbeat_record

    worker_heartbeat_record(hostname=sender.hostname)
