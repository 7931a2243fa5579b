"""The portal's staff roles, shipped as groups: the one table of who gets which permission.

Each role is a Django group whose name is stored data and never translated ("Task
author"); the admin shows it under its label in the reader's language. Writing tasks
never brings the holdout: authors and reviewers hold no permission that needs a second
factor (mica.site.staff.second_factor_required), so they sign in with their password
alone. The method lead and the administrator are superusers besides, which is what
publishing an edition and issuing tokens and enrolment codes check; their groups say
what the role works with, and keep it should superuser status be withdrawn.

The groups are made by the migration site.0008_staff_roles, which calls
`staff_roles_install`. A change of this table ships with a new migration that calls it
again (tests/security/test_staff_roles.py compares the groups with the table), so an
administrator's later edits of a group are never overwritten by a restart or a migrate.
"""

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

HOLDOUT_CODENAME = "catalogue.view_holdout"


def _each(app, actions, *models):
    return tuple(f"{app}.{action}_{model}" for model in models for action in actions.split())


# What an author writes (a task, its version and the version's parts) and what they read.
_CATALOGUE_READ = _each(
    "catalogue", "view", "taskfamily", "taskdefinition", "taskversion", "contractclause",
    "marketapplicability", "taskevent", "localreview", "reviewevent", "reviewcomment",
)  # fmt: skip
# A review is opened, commented on and decided through its page and its actions.
_REVIEW_WORK = _each("catalogue", "change", "localreview") + _each(
    "catalogue", "add change", "reviewcomment"
)


@dataclass(frozen=True)
class StaffRole:
    name: str  # the group's stored name
    label: str  # the group's name for a reader, in their language
    duty: str
    permissions: tuple = ()  # "app_label.codename"
    apps: tuple = ()  # apps whose every permission the role holds
    superuser: bool = False  # what the role's own actions check besides the group
    second_factor: bool = False


STAFF_ROLES = (
    StaffRole(
        name="Task author",
        label=_("Task author"),
        duty=_(
            "Writes tasks and their versions and opens their local reviews, in the markets "
            "of an author competence."
        ),
        permissions=_CATALOGUE_READ
        + _each("catalogue", "add change", "taskdefinition", "taskversion")
        + _each("catalogue", "add change delete", "contractclause", "marketapplicability")
        + _each("catalogue", "add", "localreview")
        + _REVIEW_WORK,
    ),
    StaffRole(
        name="Local reviewer",
        label=_("Local reviewer"),
        duty=_(
            "Approves local reviews or requests changes, in the markets of a reviewer competence."
        ),
        # The claims list, where one with a Korean competence approves a Korean text.
        permissions=_CATALOGUE_READ + _REVIEW_WORK + ("methodology.view_chapteritem",),
    ),
    StaffRole(
        name="Method lead",
        label=_("Method lead"),
        duty=_(
            "Promotes tasks, sets thresholds, publishes editions and grants competences "
            "(a superuser)."
        ),
        apps=("methodology", "markets", "catalogue", "governance", "submissions"),
        superuser=True,
        second_factor=True,
    ),
    StaffRole(
        name="Holdout keeper",
        label=_("Holdout keeper"),
        duty=_(
            "Sees the holdout tasks and their commitments and records reruns, with a "
            "declaration of holdout access."
        ),
        permissions=(HOLDOUT_CODENAME,)
        + _each("catalogue", "view", "taskfamily", "taskdefinition", "taskversion")
        + _each("catalogue", "view", "exposureentry", "holdoutsalt", "holdoutcommitment")
        + _each("submissions", "view", "system", "systemsnapshot", "attempt")
        + ("submissions.record_independent_rerun", "submissions.record_provisional"),
        second_factor=True,
    ),
    StaffRole(
        name="Operator",
        label=_("Operator"),
        duty=_(
            "Records its own system's attempts through the API with a token. No permission: "
            "the system's operator account is what allows it."
        ),
    ),
    StaffRole(
        name="Administrator",
        label=_("Administrator"),
        duty=_(
            "Makes staff accounts, issues enrolment codes and API tokens, unlocks sign-ins "
            "and watches the jobs (a superuser)."
        ),
        permissions=_each("auth", "add change delete view", "user", "group")
        + _each("auth", "view", "permission")
        + _each("admin", "view", "logentry")
        + _each("axes", "view delete", "accessattempt")
        + _each("axes", "view", "accessfailurelog", "accesslog")
        + _each("otp_totp", "view delete", "totpdevice")
        + _each("site", "add view delete", "apitoken", "enrolmentcode")
        + _each("jobs", "view", "jobrun", "workerheartbeat")
        + _each("governance", "add change view", "persondeclaration"),
        superuser=True,
        second_factor=True,
    ),
)

ROLES_BY_NAME = {role.name: role for role in STAFF_ROLES}


def role_label(group):
    """A group's name for the reader: a shipped role's label, any other group's name."""
    role = ROLES_BY_NAME.get(group.name)
    return str(role.label) if role else group.name


def role_permissions(role, permission_model):
    """The permissions `role` holds, as rows of `permission_model` (live or historical)."""
    from django.db.models import Q

    wanted = Q(content_type__app_label__in=role.apps)
    for dotted in role.permissions:
        app, codename = dotted.split(".")
        wanted |= Q(content_type__app_label=app, codename=codename)
    if not (role.apps or role.permissions):
        return permission_model.objects.none()
    return permission_model.objects.filter(wanted)


def staff_roles_install(apps):
    """Make (or set again) every role's group with exactly the table's permissions.

    On a fresh database nothing has made the permissions yet (post_migrate does, after
    the last migration), so they are made first, as post_migrate would."""
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    staff_roles_set(apps.get_model("auth", "Group"), apps.get_model("auth", "Permission"))


def staff_roles_set(group_model, permission_model):
    """Every role's group, made if missing, with exactly the table's permissions."""
    for role in STAFF_ROLES:
        group, _created = group_model.objects.get_or_create(name=role.name)
        group.permissions.set(role_permissions(role, permission_model))
