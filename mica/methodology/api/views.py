"""Methodology records over HTTP: both languages side by side, live figures filled in."""

from django.http import Http404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from mica.bilingual import LANGUAGES
from mica.methodology.diff import EDITION_STANDINGS, bilingual, edition_diff, edition_standing
from mica.methodology.facts import live_facts
from mica.methodology.models import Edition
from mica.methodology.pack import fill_placeholders
from mica.methodology.selectors import edition_current, edition_list, pack_content


def _filled(node, facts):
    """Fill every {en, ko} text with the figures of its own language."""
    if isinstance(node, dict):
        if set(node) == set(LANGUAGES) and all(isinstance(v, str) for v in node.values()):
            return {lang: fill_placeholders(node[lang], facts[lang]) for lang in LANGUAGES}
        return {key: _filled(value, facts) for key, value in node.items()}
    if isinstance(node, list):
        return [_filled(value, facts) for value in node]
    return node


class EditionSerializer(serializers.ModelSerializer):
    """An edition, with what it is in words: a preview (the draft the site shows while
    nothing is published), a draft, published or superseded."""

    standing = serializers.SerializerMethodField()
    standing_label = serializers.SerializerMethodField()

    class Meta:
        model = Edition
        fields = [
            "slug",
            "version_label_en",
            "version_label_ko",
            "status",
            "standing",
            "standing_label",
            "published_on",
            "review_cutoff",
            "min_eligible_runs",
            "min_coverage",
            "runs_per_task",
            "max_ineligible_discard_rate",
        ]

    @extend_schema_field(
        serializers.ChoiceField(choices=["preview", "draft", "published", "superseded"])
    )
    def get_standing(self, edition):
        return edition_standing(edition, self.context.get("current"))

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_standing_label(self, edition):
        return bilingual(EDITION_STANDINGS[self.get_standing(edition)])


class _CurrentEditionView(APIView):
    def edition(self):
        edition = edition_current()
        if edition is None:
            raise Http404
        return edition

    def content(self):
        edition = self.edition()
        facts = live_facts(edition)
        return edition, _filled(pack_content(edition), facts), facts


@extend_schema(
    summary=_("Every edition of the method, newest first"), responses=EditionSerializer(many=True)
)
class EditionList(APIView):
    def get(self, request):
        context = {"current": edition_current()}
        return Response(EditionSerializer(edition_list(), many=True, context=context).data)


@extend_schema(
    summary=_("The current edition's chapters, claims, contract and policy register"),
    responses=OpenApiTypes.OBJECT,
)
class Methodology(_CurrentEditionView):
    def get(self, request):
        edition, content, _facts = self.content()
        return Response(
            {
                "edition": edition.slug,
                "vocabulary": content["vocabulary"],
                "chapters": content["chapters"],
                "contract": content["contract"],
                "policy_register": content["policy_register"],
            }
        )


@extend_schema(
    summary=_("The references the current edition cites, grouped"), responses=OpenApiTypes.OBJECT
)
class ReferenceList(_CurrentEditionView):
    def get(self, request):
        edition, content, _facts = self.content()
        return Response(
            {
                "edition": edition.slug,
                "groups": content["reference_groups"],
                "references": content["references"],
            }
        )


@extend_schema(summary=_("The glossary of the current edition"), responses=OpenApiTypes.OBJECT)
class Glossary(_CurrentEditionView):
    def get(self, request):
        edition, content, _facts = self.content()
        return Response({"edition": edition.slug, "terms": content["glossary"]})


@extend_schema(
    summary=_("The live figures, counted from the records now"), responses=OpenApiTypes.OBJECT
)
class Facts(_CurrentEditionView):
    def get(self, request):
        edition = self.edition()
        return Response({"edition": edition.slug, "facts": live_facts(edition)})


@extend_schema(
    summary=_(
        "Everything that changed between two editions: thresholds, claims, tasks, "
        "references and market editions, each with its title in both languages"
    ),
    responses=OpenApiTypes.OBJECT,
)
class EditionDiff(APIView):
    def get(self, request, older, newer):
        editions = {e.slug: e for e in Edition.objects.filter(slug__in=[older, newer])}
        if older not in editions or newer not in editions:
            raise Http404
        return Response(edition_diff(editions[older], editions[newer]))
