"""The rules reviews and promotions are judged by: content hashes, four eyes, gaps."""

import hashlib
import json
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from catalogue.models import ClauseKind, ReviewState
from markets.models import CompetenceRole
from markets.selectors import competent_market_codes
from mica.bilingual import field_pair
from mica.errors import PermissionRefused
from mica.vocabulary import MARKET_ORDER

# `bar(person, version)` -> why that person may not approve it ("holdout-access",
# "declared-conflict") or None: registered by governance, which keeps the declarations.
_review_bars = []


def review_bar_register(bar):
    _review_bars.append(bar)


def _review_bar(actor, version):
    return next(filter(None, (bar(actor, version) for bar in _review_bars)), None)


def _bilingual(record, *fields):
    return {field: field_pair(record, field) for field in fields}


def task_version_content(version):
    """Everything a reviewer approves, as plain data (clauses and applicability included)."""
    return {
        "task": version.definition.slug,
        "version": version.version,
        **_bilingual(version, "title", "final_state", "confirmation_boundary", "idempotency"),
        "evidence_requirements": version.evidence_requirements,
        "surface": version.surface,
        "termination_class": version.termination_class,
        "declared_complexity": version.declared_complexity,
        "diagnostic_axes": version.diagnostic_axes,
        "locality_conditions": version.locality_conditions,
        "parameter_schema": version.parameter_schema,
        # Seed: "Speed and cost references are pre-registered per task version": what a
        # reviewer approves, so an edit of them voids the approval as any other edit does.
        "references": version.references(),
        "clauses": [
            {"kind": c.kind, **_bilingual(c, "text")}
            for c in version.clauses.order_by("kind", "position", "pk")
        ],
        "applicability": [
            {
                "market": a.market.code,
                "status": a.status,
                **_bilingual(a, "note", "variant", "region", "channel", "register"),
            }
            for a in version.applicability.select_related("market").order_by(
                "market__display_order"
            )
        ],
    }


def task_version_hash(version):
    canonical = json.dumps(
        task_version_content(version), sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _market_code(review):
    return review.market.code


def require_author_for(review, actor):
    if actor is None or not (
        actor.is_superuser
        or _market_code(review)
        in competent_market_codes(actor, roles=[CompetenceRole.AUTHOR, CompetenceRole.LEAD])
    ):
        raise PermissionRefused(
            _("Only an author with a current competence for %(market)s can submit this review.")
            % {"market": _market_code(review)}
        )


def require_participant_in(review, actor):
    """Who may discuss a review: a person competent for its market in any role (its
    author included), or the method lead."""
    if actor is None or not (
        actor.is_superuser or _market_code(review) in competent_market_codes(actor)
    ):
        raise PermissionRefused(
            _("Only people with a current competence for %(market)s can comment on this review.")
            % {"market": _market_code(review)}
        )


def require_reviewer_for(review, actor):
    """Four eyes: a competent reviewer who neither wrote nor edited the revision."""
    code = _market_code(review)
    if actor is None or code not in competent_market_codes(
        actor, roles=[CompetenceRole.REVIEWER, CompetenceRole.LEAD]
    ):
        raise PermissionRefused(
            _("Only a reviewer with a current competence for %(market)s can decide this review.")
            % {"market": code}
        )
    if actor.pk == review.author_id:
        raise PermissionRefused(_("Nobody reviews their own work: you wrote this revision."))
    if review.version.editors.filter(pk=actor.pk).exists():
        raise PermissionRefused(_("Nobody reviews their own work: you edited this revision."))
    blocked = _review_bar(actor, review.version)
    if blocked == "holdout-access":
        raise PermissionRefused(
            _("A person with holdout access cannot review while tied to an evaluated party.")
        )
    if blocked == "declared-conflict":
        raise PermissionRefused(
            _(
                "You declared a conflict with a system evaluated on this "
                "task, so you cannot approve it."
            )
        )


# --- Promotion ----------------------------------------------------------------


def _design_gaps(version, applicability):
    fields = [
        ("surface", _("surface")),
        ("termination_class", _("termination class")),
        ("declared_complexity", _("declared complexity")),
        ("diagnostic_axes", _("diagnostic axes")),
    ]
    gaps = [
        _("missing %(field)s") % {"field": label}
        for name, label in fields
        if not getattr(version, name)
    ]
    return gaps


def _applicability_gaps(version, applicability):
    if not applicability:
        return [_("missing market applicability")]
    gaps = []
    codes = [a.market.code for a in applicability]
    for code in sorted(set(c for c in codes if codes.count(c) > 1)):
        gaps.append(_("market applicability repeats %(market)s") % {"market": code})
    for code in MARKET_ORDER:
        if code not in codes:
            gaps.append(_("market applicability omits %(market)s") % {"market": code})
    return gaps


def _reference_gaps(version, applicability):
    if version.reference_status != "registered":
        return [_("speed and cost references are still calibration-pending")]
    return []


def _contract_gaps(version, applicability):
    kinds = {clause.kind for clause in version.clauses.all()}
    labels = {
        ClauseKind.OBLIGATION: _("obligations"),
        ClauseKind.INVARIANT: _("invariants"),
        ClauseKind.PROHIBITED: _("prohibited states"),
    }
    return [
        _("the contract has no %(part)s") % {"part": labels[kind]}
        for kind in ClauseKind
        if kind not in kinds
    ]


def _review_gaps(version, applicability):
    applying = {a.market.code for a in applicability if a.applies}
    approvals = list(version.reviews.filter(state=ReviewState.APPROVED).select_related("market"))
    current = task_version_hash(version) if approvals else None
    approved = {review.market.code for review in approvals if review.approved_hash == current}
    return [
        _("no approved local review in %(market)s") % {"market": code}
        for code in MARKET_ORDER
        if code in applying and code not in approved
    ]


@dataclass(frozen=True)
class ValidationRule:
    """One rule a version must meet to be validated: what it asks, in the editor's
    language, and `gaps(version, applicability)`, each unmet part as a phrase.

    `before_review`: a local review cannot meet it, so it holds before one is submitted;
    a reviewer then approves content that can be validated as it stands.
    """

    code: str
    statement: str
    gaps: object
    before_review: bool = True


# PORTAL.md: promotion "needs: surface, termination class, declared complexity,
# diagnostic axes, market applicability for all six markets …, registered speed and
# cost references …, an approved local review in every applicable market, and a
# contract with obligations, invariants and prohibited states". In the order the
# refusals name them.
VALIDATION_RULES = (
    ValidationRule(
        "design",
        gettext_lazy("Surface, termination class, declared complexity and diagnostic axes"),
        _design_gaps,
    ),
    ValidationRule(
        "applicability",
        gettext_lazy("Market applicability stated once for each of the six markets"),
        _applicability_gaps,
    ),
    ValidationRule(
        "references",
        gettext_lazy("Speed and cost references registered for this version"),
        _reference_gaps,
    ),
    ValidationRule(
        "local-review",
        gettext_lazy("An approved local review of this content in every market it applies in"),
        _review_gaps,
        before_review=False,
    ),
    ValidationRule(
        "contract",
        gettext_lazy("A contract with obligations, invariants and prohibited states"),
        _contract_gaps,
    ),
)


@dataclass(frozen=True)
class ChecklistItem:
    rule: ValidationRule
    gaps: list

    @property
    def met(self):
        return not self.gaps


def task_validation_checklist(version, rules=VALIDATION_RULES):
    """Each rule of validation with what `version` still lacks to meet it: the one
    judgement the version's page, review submission and promotion all read."""
    applicability = list(version.applicability.select_related("market"))
    return [ChecklistItem(rule, rule.gaps(version, applicability)) for rule in rules]


def task_review_submission_gaps(version):
    """What `version` lacks that no local review can supply; empty when a review of it
    may be submitted."""
    rules = [rule for rule in VALIDATION_RULES if rule.before_review]
    return [gap for item in task_validation_checklist(version, rules) for gap in item.gaps]


def task_promotion_gaps(definition, version=None):
    """Every reason the task cannot be validated on `version` (its current version unless
    named), nor that version made current; empty when it can."""
    version = version or definition.current_version
    if version is None:
        return [_("the task has no version")]
    return [gap for item in task_validation_checklist(version) for gap in item.gaps]
