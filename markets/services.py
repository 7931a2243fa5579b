"""Every write to the market records, and the rules they must satisfy."""

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from markets.models import (
    LIVE_REGISTRATION,
    CompetenceRole,
    IntegrationSituation,
    MarketEdition,
    PlatformRegistration,
    RegistrationStatus,
    RepresentativePlatform,
)
from markets.selectors import competent_market_codes, datasheet_figures
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.methodology.services import placeholder_errors
from mica.text import plain
from mica.vocabulary import (
    COVERAGE_DIMENSIONS,
    TASK_FAMILY_IDS,
    EvidenceType,
    RecoveryCondition,
    Surface,
)

SITUATION_LIST_FIELDS = {
    "surfaces": Surface,
    "recovery_conditions": RecoveryCondition,
    "evidence_types": EvidenceType,
}


# --- Coverage ---------------------------------------------------------------


@dataclass
class CoverageDimension:
    key: str
    label: str
    actual: int
    required: int
    values: set = field(default_factory=set)

    @property
    def met(self):
        return self.actual >= self.required

    @property
    def gap(self):
        return _("%(dimension)s: %(actual)s of %(required)s required") % {
            "dimension": self.label,
            "actual": self.actual,
            "required": self.required,
        }


@dataclass
class CoverageAudit:
    dimensions: list

    @property
    def gaps(self):
        return [d.gap for d in self.dimensions if not d.met]

    @property
    def complete(self):
        return not self.gaps


def _distinct_values(situations, key):
    values = set()
    for situation in situations:
        if key == "authorization_boundaries":
            values.add(situation.authorization_boundary)
        elif key == "completion_semantics":
            values.add(situation.completion_semantics)
        else:
            values.update(getattr(situation, key))
    return values


def coverage_audit(situations):
    """Audit one market edition's situations against the profile minimums.

    Takes the situations (already fetched) so a page of six markets audits
    them without a query each.
    """
    situations = list(situations)
    dimensions = []
    for key, label, _choices, required in COVERAGE_DIMENSIONS:
        if key == "situations":
            values = {s.situation_id for s in situations}
        else:
            values = _distinct_values(situations, key)
        dimensions.append(CoverageDimension(key, str(label), len(values), required, values))
    return CoverageAudit(dimensions)


# --- Situations -------------------------------------------------------------


def situation_errors(situation, market_code):
    """Field errors of a situation; empty when it may be saved."""
    errors = {}
    prefix = f"{market_code.lower()}-"
    if not situation.situation_id.startswith(prefix):
        errors["situation_id"] = [
            _("A situation id of market %(code)s must start with “%(prefix)s”.")
            % {"code": market_code, "prefix": prefix}
        ]
    for name, choices in SITUATION_LIST_FIELDS.items():
        values = getattr(situation, name) or []
        unknown = [v for v in values if v not in choices.values]
        if not values:
            errors[name] = [_("Choose at least one value.")]
        elif unknown or len(set(values)) != len(values):
            errors[name] = [
                _("Unknown or repeated values: %(values)s.")
                % {"values": ", ".join(map(str, unknown)) or ", ".join(values)}
            ]
    families = situation.task_families or []
    unknown = [f for f in families if f not in TASK_FAMILY_IDS]
    if not families or unknown:
        errors["task_families"] = [
            _("Name at least one task family; unknown: %(values)s.")
            % {"values": ", ".join(map(str, unknown)) or "—"}
        ]
    duplicate = (
        IntegrationSituation.objects.filter(
            market_edition=situation.market_edition_id, situation_id=situation.situation_id
        )
        .exclude(pk=situation.pk)
        .exists()
    )
    if duplicate:
        errors.setdefault("situation_id", []).append(
            _("Situation id “%(id)s” is already declared in this market edition.")
            % {"id": situation.situation_id}
        )
    return errors


# The live figures a datasheet's prose may name as ``{{name}}``: the ones
# ``selectors.datasheet_figures`` counts.
DATASHEET_FIGURES = frozenset(name.removeprefix("figure_") for name in datasheet_figures())


def datasheet_errors(sheet):
    """{field: [message]} for a datasheet text naming a figure the datasheet has not."""
    return placeholder_errors(sheet, DATASHEET_FIGURES, frozenset())


def require_market_competence(user, market_code):
    """Only people with a current competence for a market change its records."""
    if user.is_superuser or market_code in competent_market_codes(user):
        return
    raise PermissionRefused(
        _("You hold no current competence for market %(code)s, so you cannot change its records.")
        % {"code": market_code}
    )


# Who freezes what another drafted, as in local review: a reviewer or the market's lead.
DECIDING_ROLES = (CompetenceRole.REVIEWER, CompetenceRole.LEAD)


def require_market_reviewer(user, market_code):
    """Only a current reviewer or lead of a market decides on what others drafted there."""
    if user.is_superuser or market_code in competent_market_codes(user, roles=DECIDING_ROLES):
        return
    raise PermissionRefused(
        _(
            "Only a current local reviewer or market lead of %(code)s pre-registers a platform "
            "set or decides on an outage there."
        )
        % {"code": market_code}
    )


def situation_update(*, situation, changes, actor):
    """Change a situation's fields after checking competence and every rule."""
    market_code = situation.market_edition.market.code
    require_market_competence(actor, market_code)
    require_editable_edition(situation.market_edition.edition)
    with transaction.atomic():
        situation = IntegrationSituation.objects.select_for_update().get(pk=situation.pk)
        for name, value in changes.items():
            setattr(situation, name, value)
        errors = situation_errors(situation, market_code)
        if errors:
            raise ValidationFailed(_("The situation was not saved."), field_errors=errors)
        situation.save()
    return situation


def require_editable_edition(edition):
    if edition.status != "draft":
        raise ValidationFailed(
            _("Edition %(edition)s is published and cannot change; changes go into a new edition.")
            % {"edition": edition}
        )


# --- Platform registrations ----------------------------------------------------
#
# Seed: "The selected platform, version, snapshot date and ordered fallback list are
# fixed before systems run." A set is drafted (created, its platforms edited), then
# frozen ("pre-registered") by someone who did not draft it, four eyes as in every
# review. A frozen set changes only through a replacement: a draft that names the set
# it supersedes and why, frozen in turn by someone who did not draft it, at which
# moment the old set becomes history.


def registration_drafters(registration):
    """The people who saved the draft set or any of its platforms (their revisions);
    a content load saves as nobody."""
    drafted = set(
        registration.history.filter(status=RegistrationStatus.DRAFT).values_list(
            "history_user_id", flat=True
        )
    )
    drafted |= set(
        RepresentativePlatform.history.filter(registration_id=registration.pk).values_list(
            "history_user_id", flat=True
        )
    )
    return drafted - {None}


def _require_not_drafter(registration, actor):
    if getattr(actor, "pk", None) in registration_drafters(registration):
        raise PermissionRefused(
            _(
                "Nobody freezes a platform set they drafted: someone else with a competence "
                "for this market pre-registers it."
            )
        )


def _saved_by(record, actor):
    """Save `record` with `actor` named in its revision (a service runs outside a request)."""
    record._history_user = actor if getattr(actor, "pk", None) else None
    record.save()
    return record


def platform_registration_register(*, registration_id, actor):
    """Pre-register a draft set of platforms: from now on it is frozen. A draft that
    replaces a set in force takes its place, and the old set is superseded."""
    with transaction.atomic():
        registration = PlatformRegistration.objects.select_for_update().get(pk=registration_id)
        require_market_reviewer(actor, registration.market_edition.market.code)
        if registration.status != RegistrationStatus.DRAFT:
            raise InvalidTransition(_("This platform set is already pre-registered."))
        if not registration.platforms.exists():
            raise ValidationFailed(_("A registration needs at least one platform."))
        _require_not_drafter(registration, actor)
        if registration.supersedes_id is not None:
            _supersede(registration.supersedes_id, actor)
        elif _in_force(registration).exists():
            raise InvalidTransition(
                _(
                    "A set is already in force for this family: start a replacement of it, "
                    "which says why, instead."
                )
            )
        registration.status = RegistrationStatus.REGISTERED
        registration.registered_at = timezone.now()
        registration.registered_by = actor if getattr(actor, "pk", None) else None
        _saved_by(registration, actor)
    return registration


def _in_force(registration):
    return PlatformRegistration.objects.filter(
        market_edition=registration.market_edition_id,
        task_family=registration.task_family,
        status=RegistrationStatus.REGISTERED,
    )


def _supersede(registration_id, actor):
    old = PlatformRegistration.objects.select_for_update().get(pk=registration_id)
    if old.status != RegistrationStatus.REGISTERED:
        raise InvalidTransition(_("Only a pre-registered platform set can be superseded."))
    old.status = RegistrationStatus.SUPERSEDED
    _saved_by(old, actor)


def platform_registration_draft_replacement(*, registration_id, reason_en, reason_ko, actor):
    """Start replacing a frozen set: a draft copy of its platforms that names the set it
    supersedes and why, in English and Korean. The old set stays in force until someone
    other than the drafter freezes the replacement."""
    reason_en, reason_ko = plain(reason_en), plain(reason_ko)
    if not reason_en or not reason_ko:
        raise ValidationFailed(
            _("Superseding a registration needs a reason in English and Korean."),
            field_errors={"supersede_reason": [_("Give the reason in both languages.")]},
        )
    with transaction.atomic():
        old = PlatformRegistration.objects.select_for_update().get(pk=registration_id)
        require_market_competence(actor, old.market_edition.market.code)
        if old.status != RegistrationStatus.REGISTERED:
            raise InvalidTransition(_("Only a pre-registered platform set can be superseded."))
        drafts = PlatformRegistration.objects.filter(
            market_edition=old.market_edition,
            task_family=old.task_family,
            status=RegistrationStatus.DRAFT,
        )
        if drafts.exists():
            raise InvalidTransition(
                _("A draft set for this family already exists: edit it, or delete it first.")
            )
        new = _saved_by(
            PlatformRegistration(
                market_edition=old.market_edition,
                task_family=old.task_family,
                supersedes=old,
                supersede_reason_en=reason_en,
                supersede_reason_ko=reason_ko,
            ),
            actor,
        )
        for platform in old.platforms.order_by("rank"):
            platform.pk = platform.id = None
            platform.registration = new
            _saved_by(platform, actor)
    return new


def require_platforms_editable(registration):
    if registration is not None and registration.frozen:
        raise ValidationFailed(
            _(
                "This platform set is pre-registered and frozen; supersede it with a new "
                "registration and a reason instead."
            )
        )


# --- Editions -----------------------------------------------------------------------


def _copy(record, **changes):
    record.pk = None
    record.id = None
    for name, value in changes.items():
        setattr(record, name, value)
    record.save()
    return record


def _copy_registration(registration, market_edition):
    """A live registration carries over with its platforms; its history stays behind."""
    platforms = list(registration.platforms.order_by("pk"))
    copied = _copy(
        registration, market_edition=market_edition, supersedes=None, supersede_reason=""
    )
    for platform in platforms:
        _copy(platform, registration=copied)


def market_editions_copy(*, source, target):
    """Copy every market edition of `source` (with everything it declares) into `target`."""
    for market_edition in MarketEdition.objects.filter(edition=source).order_by("pk"):
        old = MarketEdition.objects.get(pk=market_edition.pk)
        copied = _copy(market_edition, edition=target)
        for hazard in old.hazards.order_by("pk"):
            _copy(hazard, market_edition=copied)
        for change in old.local_changes.order_by("pk"):
            _copy(change, market_edition=copied)
        for situation in old.situations.order_by("pk"):
            _copy(situation, market_edition=copied)
        live = old.platform_registrations.filter(LIVE_REGISTRATION)
        for registration in live.order_by("pk"):
            _copy_registration(registration, copied)
        for one_to_one in ("datasheet", "data_statement"):
            record = getattr(old, one_to_one, None)
            if record is not None:
                _copy(record, market_edition=copied)


def market_editions_follow_draft(sender, *, source, draft, **kwargs):
    """A new draft edition carries a copy of every market edition of its source."""
    market_editions_copy(source=source, target=draft)
