import json
import uuid

from django.conf import settings
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from catalogue.selectors import family_list
from markets.selectors import market_list
from mica.clients import client_address
from mica.errors import Conflict, DomainError, RecordNotFound
from mica.methodology.selectors import edition_current
from mica.vocabulary import BLOCKER_SENTENCES
from submissions.api.examples import SYSTEM_SUBMISSION, VALID_BATCH, VALID_BATCH_ANSWER
from submissions.challenges import (
    challenge_confirm,
    challenge_file,
    filed_receipt_url,
    filed_reference,
)
from submissions.forms import ChallengeForm, SystemSubmissionForm
from submissions.ingest import ATTEMPT_RULES
from submissions.models import (
    PUBLIC_CHALLENGE_STATES,
    Challenge,
    ChallengeState,
    ChallengeType,
    Verification,
)
from submissions.selectors import challenge_public_get, challenge_public_list, challenges_on_section
from submissions.system_submissions import system_submission_file
from submissions.throttle import intake_allowed


@require_safe
def submit(request):
    return render(
        request,
        "submissions/submit.html",
        {
            "edition": edition_current(),
            "verifications": Verification.choices,
            "blockers": list(BLOCKER_SENTENCES.items()),
        },
    )


@require_http_methods(["GET", "POST"])
def challenge_new(request):
    edition = edition_current()
    if request.method == "POST":
        form = ChallengeForm(request.POST)
        if form.is_valid() and not intake_allowed(
            address=client_address(request), email=form.cleaned_data["contact_email"]
        ):
            form.add_error(None, _("Too many filings in the last hour; please try again later."))
        elif form.is_valid() and not form.cleaned_data.get("website"):
            key = request.POST.get("idempotency_key") or uuid.uuid4().hex
            try:
                challenge, _created = challenge_file(
                    payload=form.payload(edition.slug, request.LANGUAGE_CODE, key[:64])
                )
            except Conflict:
                # The page's key came back with other text (edited after sending, say):
                # the form renders with a fresh key, so sending it again files it anew.
                form.add_error(
                    None,
                    _(
                        "This form was already sent with other content. Check it and "
                        "send it again to file it as a new challenge."
                    ),
                )
            except DomainError as refused:
                _show_refusal(form, refused)
            else:
                return redirect(filed_receipt_url(challenge))
    else:
        form = ChallengeForm(initial={"section_id": request.GET.get("section", "")[:120]})
    section = form["section_id"].value() or ""
    return render(
        request,
        "submissions/challenge_form.html",
        {
            "form": form,
            "edition": edition,
            "idempotency_key": uuid.uuid4().hex,
            "same_section": challenges_on_section(edition, section)[:20] if section else [],
        },
        status=400 if form.errors else 200,
    )


def _show_refusal(form, refused):
    """Put a service's field errors on the form, beside the fields they name."""
    for field, messages in refused.field_errors.items():
        for message in _flat(messages):
            form.add_error(field if field in form.fields else None, message)


def _flat(messages):
    if isinstance(messages, dict):
        return [m for value in messages.values() for m in _flat(value)]
    if isinstance(messages, list):
        return [m for value in messages for m in _flat(value)]
    return [str(messages)]


@require_safe
def challenge_filed(request):
    """The receipt after the form: the reference number, read from the signed link the
    form redirected to (a number typed in shows nothing)."""
    return render(
        request,
        "submissions/challenge_filed.html",
        {"reference": filed_reference(request.GET.get("ref", "")[:200])},
    )


@require_safe
def challenge_confirmed(request, token):
    """The confirmation link confirms the address and, opened again, tells the filer
    where the challenge stands, also before it is screened and public."""
    try:
        challenge = challenge_confirm(token=token)
    except DomainError as refused:
        return render(
            request, "submissions/challenge_filed.html", {"error": refused.message}, status=400
        )
    return render(
        request,
        "submissions/challenge_filed.html",
        {
            "confirmed": True,
            "challenge": challenge,
            "public": challenge.state in PUBLIC_CHALLENGE_STATES,
        },
    )


@require_safe
def challenge_list(request):
    challenges = challenge_public_list()
    state = request.GET.get("state", "")
    kind = request.GET.get("type", "")
    section = request.GET.get("section", "")
    market = request.GET.get("market", "")
    if state in ChallengeState.values:
        challenges = challenges.filter(state=state)
    if kind in ChallengeType.values:
        challenges = challenges.filter(challenge_type=kind)
    if section:
        challenges = challenges.filter(section_id=section[:120])
    if market:
        challenges = challenges.filter(evidence__market=market[:2].upper())
    return render(
        request,
        "submissions/challenge_list.html",
        {
            "challenges": challenges[:200],
            "states": ChallengeState.choices,
            "types": ChallengeType.choices,
            "chosen": {"state": state, "type": kind, "section": section, "market": market},
        },
    )


@require_safe
def challenge_detail(request, pk):
    try:
        challenge = challenge_public_get(pk)
    except Challenge.DoesNotExist as missing:
        # The same words for a number never used and a challenge not yet screened,
        # so the page does not tell which numbers hold private challenges.
        raise RecordNotFound(
            _("There is no public challenge with this number."),
            _(
                "A challenge appears in the public register only once an editor has "
                "screened it. Until then, or if the number is mistyped, there is nothing "
                "to show here."
            ),
            link_url=reverse("submissions:challenges"),
            link_label=_("See the public challenges"),
        ) from missing
    return render(request, "submissions/challenge_detail.html", {"challenge": challenge})


@require_http_methods(["GET", "POST"])
def system_new(request):
    options = {"markets": list(market_list()), "families": list(family_list())}
    if request.method == "POST":
        form = SystemSubmissionForm(request.POST, **options)
        if form.is_valid() and not intake_allowed(
            address=client_address(request), email=form.cleaned_data["contact_email"]
        ):
            form.add_error(None, _("Too many filings in the last hour; please try again later."))
        elif form.is_valid():
            try:
                submission = system_submission_file(payload=form.payload())
            except DomainError as refused:
                _show_refusal(form, refused)
            else:
                return render(
                    request, "submissions/system_received.html", {"submission": submission}
                )
    else:
        form = SystemSubmissionForm(**options)
    return render(
        request, "submissions/system_form.html", {"form": form}, status=400 if form.errors else 200
    )


@require_safe
def operator_guide(request):
    """From a system submission to the gate's answer, for operators, with the very examples
    the API schema documents."""
    return render(
        request,
        "submissions/operator_guide.html",
        {
            "api_base": settings.SITE_URL,
            "submission_json": json.dumps(SYSTEM_SUBMISSION, indent=2, ensure_ascii=False),
            "batch_json": json.dumps(VALID_BATCH, indent=2, ensure_ascii=False),
            "batch_jsonl": "\n".join(json.dumps(a, ensure_ascii=False) for a in VALID_BATCH),
            "answer_json": json.dumps(VALID_BATCH_ANSWER, indent=2),
            "rules": [
                {"rule": rule, "status": status, "sentence": sentence}
                for rule, (status, sentence) in ATTEMPT_RULES.items()
            ],
            "blockers": list(BLOCKER_SENTENCES.items()),
            "snapshot": VALID_BATCH[0]["snapshot"],
        },
    )
