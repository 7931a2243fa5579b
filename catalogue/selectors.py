"""Reads of the catalogue. `task_public_list` is the one door the public goes through."""

from django.contrib.auth import get_user_model
from django.db.models import (
    Count,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    prefetch_related_objects,
)
from django.utils.translation import gettext

from catalogue.access import holdout_access, visible_tasks
from catalogue.models import (
    APPLYING,
    OPEN_REVIEW_STATES,
    ContractClause,
    Lifecycle,
    LocalReview,
    MarketApplicability,
    ReviewState,
    TaskDefinition,
    TaskFamily,
    TaskSet,
    TaskVersion,
)
from catalogue.rules import require_reviewer_for
from markets.models import CompetenceRole, Market
from markets.selectors import competent_market_codes
from mica.errors import PermissionRefused

DECIDING_ROLES = [CompetenceRole.REVIEWER, CompetenceRole.LEAD]


def task_applies_in(**market):
    """Tasks that apply in one market (`market__code=…` or `market_id=…`).

    One condition, so the market and the status are read from the same applicability
    row; an exclude() over the relation would also drop a task for a market where it
    does not apply.
    """
    ((field, value),) = market.items()
    return Q(
        **{
            f"current_version__applicability__{field}": value,
            "current_version__applicability__status__in": APPLYING,
        }
    )


def family_list():
    return TaskFamily.objects.order_by("position")


def _current_clauses():
    return Prefetch(
        "current_version__clauses",
        queryset=ContractClause.objects.order_by("kind", "position", "pk"),
    )


def _current_contracts():
    return [
        _current_clauses(),
        Prefetch(
            "current_version__applicability",
            # Six markets, fetched once and shared, not one copy joined into every row.
            queryset=MarketApplicability.objects.prefetch_related("market"),
        ),
    ]


def _with_current_version(queryset):
    return queryset.select_related("family", "current_version").prefetch_related(
        *_current_contracts()
    )


def task_clauses_fetch(definitions):
    """Read the clauses of these tasks' current versions, in one query whatever their
    number."""
    prefetch_related_objects(definitions, _current_clauses())


def task_markets_applying(definitions):
    """{current version pk: [(market code, status)] where the task applies, in the
    markets' order}, in one query and without a record for each of them: a catalogue
    of ten thousand tasks holds sixty thousand such rows."""
    versions = [d.current_version_id for d in definitions]
    rows = (
        MarketApplicability.objects.filter(version__in=versions, status__in=APPLYING)
        .order_by("market__display_order", "pk")
        .values_list("version_id", "market__code", "status")
    )
    applying = {version: [] for version in versions}
    for version, code, status in rows:
        applying[version].append((code, status))
    return applying


def task_public_list():
    """Every task the public may see: pages, API, search, sitemap and exports all start here.

    A holdout task is not in it, so for the public it does not exist at all.
    """
    return _with_current_version(
        TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC, current_version__isnull=False)
    ).order_by("family__position", "position", "slug")


def task_catalogue_list():
    """The public catalogue: public tasks in force. A retired task has left it; its own
    page stays, with its versions and history, for whoever cited it."""
    return task_public_list().exclude(lifecycle=Lifecycle.RETIRED)


def task_catalogue_snapshot():
    """The public tasks in force (not retired), as an edition freezes them when published."""
    tasks = (
        TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC, current_version__isnull=False)
        .exclude(lifecycle=Lifecycle.RETIRED)
        .select_related("family", "current_version")
        .order_by("family__position", "position", "slug")
    )
    return [
        {
            "slug": task.slug,
            "family": task.family.slug,
            "version": task.current_version.version,
            "title": {"en": task.current_version.title_en, "ko": task.current_version.title_ko},
        }
        for task in tasks
    ]


def _stored(model):
    return [field.attname for field in model._meta.concrete_fields]


def _values(instance):
    return tuple(getattr(instance, name) for name in _stored(type(instance)))


def _plain(model):
    # The stored columns as they are, without the translation layer's fallback for
    # every value read: a digest wants the columns, and a thousand fallbacks cost more
    # than the query.
    return QuerySet(model).values_list(*_stored(model))


def _by_version(model, versions):
    version_at = _stored(model).index("version_id")
    rows = {}
    for row in _plain(model).filter(version__in=versions).order_by("pk"):
        rows.setdefault(row[version_at], []).append(row)
    return rows


def task_row_sources(definitions):
    """{task pk: every stored value its catalogue row is made of}: the task, its current
    version, the version's clauses and applicability and the markets they name, read
    as plain values (far cheaper than records) in three queries whatever their number."""
    versions = [d.current_version_id for d in definitions]
    clauses = _by_version(ContractClause, versions)
    applicability = _by_version(MarketApplicability, versions)
    market_at = _stored(MarketApplicability).index("market_id")
    markets = {row[0]: row for row in _plain(Market)}
    return {
        d.pk: (
            _values(d),
            _values(d.current_version),
            clauses.get(d.current_version_id, []),
            [(row, markets[row[market_at]]) for row in applicability.get(d.current_version_id, [])],
        )
        for d in definitions
    }


def catalogue_balance_counts():
    """{(declared complexity, surface, termination class): public tasks in force}, in
    one query whatever the catalogue's size."""
    cells = (
        task_catalogue_list()
        .prefetch_related(None)
        .order_by()
        .values_list(
            "current_version__declared_complexity",
            "current_version__surface",
            "current_version__termination_class",
        )
        .annotate(Count("pk"))
    )
    return {(complexity, surface, end): n for complexity, surface, end, n in cells}


def task_family_counts(tasks):
    """{family id: how many of `tasks`} in one query whatever their number."""
    rows = (
        tasks.prefetch_related(None)
        .order_by()
        .values("family_id")
        .annotate(count=Count("pk", distinct=True))
    )
    return {row["family_id"]: row["count"] for row in rows}


def task_catalogue_order():
    """[(slug, family id)] of the public catalogue in its order, as plain values in one
    query: which tasks each page of `/tasks/` lists, read without reading the tasks."""
    return list(task_catalogue_list().prefetch_related(None).values_list("slug", "family_id"))


def task_catalogue_headings():
    """The public catalogue with each task's family and current version but not its
    contract, for a page that reads contracts only for the rows it has not kept."""
    return task_catalogue_list().prefetch_related(None)


def task_public_get(slug):
    return task_public_list().get(slug=slug)


def task_pages_read(slugs):
    """The public tasks among `slugs` with all their own pages show: their contracts, their
    public versions newest first (`versions_newest`: never a draft), the approvals in force
    of the current version (its `reviews_shown`: approved, of the content as it stands, so neither a
    voided approval nor a round in progress) and the exposure record; in seven queries
    however many."""
    return list(
        task_public_list()
        .filter(slug__in=slugs)
        .prefetch_related(
            Prefetch(
                "versions",
                queryset=TaskVersion.objects.public().order_by("-created_at", "-pk"),
                to_attr="versions_newest",
            ),
            Prefetch(
                "current_version__reviews",
                queryset=LocalReview.objects.filter(
                    state=ReviewState.APPROVED, approved_hash=F("version__content_hash")
                ).select_related("market"),
                to_attr="reviews_shown",
            ),
            "exposures",
        )
    )


def task_filter(
    queryset,
    *,
    family=None,
    market=None,
    surface=None,
    termination_class=None,
    complexity=None,
    lifecycle=None,
):
    """Narrow a task list by the catalogue's filters; None means no filter."""
    if family:
        queryset = queryset.filter(family__slug=family)
    if market:
        queryset = queryset.filter(task_applies_in(market__code=market))
    if surface:
        queryset = queryset.filter(current_version__surface=surface)
    if termination_class:
        queryset = queryset.filter(current_version__termination_class=termination_class)
    if complexity:
        queryset = queryset.filter(current_version__declared_complexity=complexity)
    if lifecycle:
        queryset = queryset.filter(lifecycle=lifecycle)
    return queryset.distinct()


def catalogue_figures(edition):
    """The live figures the catalogue gives an edition's prose: what `/tasks/` lists, so a
    retired task leaves the methodology's counts when it leaves the catalogue."""
    tasks = task_catalogue_list()
    return {
        "family_count": tasks.values("family").distinct().count(),
        "canonical_task_count": tasks.count(),
        "candidate_task_count": tasks.filter(lifecycle=Lifecycle.CANDIDATE).count(),
        "validated_task_count": tasks.filter(lifecycle=Lifecycle.VALIDATED).count(),
    }


def catalogue_frozen(edition):
    """What publishing an edition freezes of the catalogue."""
    return (gettext("tasks in the public catalogue"), len(task_catalogue_snapshot()))


# --- Review queues -------------------------------------------------------------------


def reviews_visible(user):
    """Local reviews `user` may see: a holdout task's exist only with the capability."""
    return LocalReview.objects.filter(visible_tasks(user, "version__definition__task_set"))


def _awaiting(user, markets):
    """In review in a market where `user` may decide, written and edited by others."""
    edited = TaskVersion.objects.filter(editors=user).values("pk")
    return (
        Q(state=ReviewState.IN_REVIEW, market__code__in=markets)
        & ~Q(author=user)
        & ~Q(version__in=edited)
    )


def _drafts(user):
    """The author's own reviews that wait for them: drafts, reviews sent back for changes,
    and reviews whose approval an edit voided, until a later round of the same version
    and market (open or approved) takes their place."""
    later_round = LocalReview.objects.filter(
        version=OuterRef("version"),
        market=OuterRef("market"),
        state__in=[*OPEN_REVIEW_STATES, ReviewState.APPROVED],
    )
    return Q(author=user) & (
        Q(state__in=[ReviewState.DRAFT, ReviewState.CHANGES_REQUESTED])
        | (Q(state=ReviewState.VOIDED) & ~Exists(later_round))
    )


def reviews_awaiting(user):
    """The four-eyes queue: reviews `user` may approve or send back."""
    markets = competent_market_codes(user, roles=DECIDING_ROLES)
    return reviews_visible(user).filter(_awaiting(user, markets))


def review_drafts_of(user):
    """The author's queue: drafts not yet submitted and reviews sent back, for changes
    or by an edit that voided their approval."""
    return reviews_visible(user).filter(_drafts(user))


def review_queue_counts(user):
    """Both queues counted in one query (after the one that reads the person's markets)."""
    markets = competent_market_codes(user, roles=DECIDING_ROLES)
    return reviews_visible(user).aggregate(
        awaiting=Count("pk", filter=_awaiting(user, markets)),
        drafts=Count("pk", filter=_drafts(user)),
    )


def review_deciders(review):
    """The people who may decide `review` now: staff with a current reviewing competence
    for its market who pass the four-eyes rule and, for a holdout task, hold the holdout
    capability. The rule is rules.require_reviewer_for, asked of each candidate."""
    candidates = (
        get_user_model()
        .objects.filter(
            is_active=True,
            is_staff=True,
            market_competences__market=review.market,
            market_competences__role__in=DECIDING_ROLES,
        )
        .distinct()
        .order_by("pk")
    )
    return [person for person in candidates if _may_decide(review, person)]


def _may_decide(review, person):
    if review.version.definition.task_set == TaskSet.HOLDOUT and not holdout_access(person):
        return False
    try:
        require_reviewer_for(review, person)
    except PermissionRefused:
        return False
    return True


def task_slug_of(*, definition_id=None, version_id=None):
    """The slug of the task a definition or version id names; "" when it is gone (a
    cascade deleted it first), which counts as every task."""
    tasks = TaskDefinition.objects.all()
    if version_id is not None:
        tasks = tasks.filter(versions__pk=version_id)
    else:
        tasks = tasks.filter(pk=definition_id)
    return tasks.values_list("slug", flat=True).first() or ""
