"""Who may see the holdout: one capability, decided in one place.

Seed: "A holdout item is never reachable from a public artifact." Inside the portal
it is reachable only for a person who holds the permission `catalogue.view_holdout`
and whose own declaration says they have holdout access: the permission is what an
administrator grants, the declaration is what the person stands behind (and what
bars them from reviewing while tied to an evaluated party). Lacking either, a
holdout task does not exist for them: not in the admin's lists, forms, history or
custom pages, and an attempt on it gets the answer a non-existent task gets.
"""

from django.db.models import Q

from catalogue.models import TaskDefinition, TaskSet, TaskVersion

HOLDOUT_PERMISSION = "catalogue.view_holdout"

# `declared(user)` -> whether the person's declaration grants holdout access; registered
# by governance, which keeps the declarations. With none registered nobody has access.
_declarations = []


def holdout_declaration_register(declared):
    _declarations.append(declared)


def holdout_access(user):
    """Whether `user` may see holdout tasks and record attempts on them."""
    if user is None or not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    if not user.has_perm(HOLDOUT_PERMISSION):
        return False
    return any(declared(user) for declared in _declarations)


def visible_tasks(user, path="task_set"):
    """A condition on `path` (the lookup to a task's set) that keeps what `user` may see."""
    if holdout_access(user):
        return Q()
    return Q(**{path: TaskSet.PUBLIC})


def task_definitions_visible(user):
    return TaskDefinition.objects.filter(visible_tasks(user))


def task_versions_visible(user):
    return TaskVersion.objects.filter(visible_tasks(user, "definition__task_set"))


class HoldoutScopedAdmin:
    """An admin whose records belong to a task (`holdout_path` leads to its set): holdout
    ones, and holdout choices in its forms, exist only for a person with holdout access.
    History, revisions and comparisons read through get_queryset, so they follow."""

    holdout_path = "task_set"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(visible_tasks(request.user, self.holdout_path))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is TaskVersion:
            kwargs["queryset"] = task_versions_visible(request.user)
        elif db_field.related_model is TaskDefinition:
            kwargs["queryset"] = task_definitions_visible(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
