"""The jobs a superuser may start from the job list, registered by the apps that own
them (in their `AppConfig.ready`): the job list lives on the ground floor and imports
none of them."""

_ON_DEMAND_JOBS = {}


def on_demand_job_register(key, *, task, label):
    """Offer `task` on the job list under the URL key `key`, named `label`."""
    _ON_DEMAND_JOBS[key] = (task, label)


def on_demand_jobs():
    """{key: (task, label)}, in the order the apps registered them."""
    return dict(_ON_DEMAND_JOBS)
