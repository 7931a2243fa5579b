from django.http import Http404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from markets.api.serializers import (
    MarketEditionDetailSerializer,
    MarketEditionSummarySerializer,
    SituationSerializer,
    SituationUpdateSerializer,
)
from markets.models import IntegrationSituation, MarketEdition
from markets.selectors import market_edition_get, market_edition_list
from markets.services import situation_update
from mica.vocabulary import AuthorizationBoundary, EvidenceType, Surface


class SituationFilter(serializers.Serializer):
    surface = serializers.ChoiceField(choices=Surface.choices, required=False)
    boundary = serializers.ChoiceField(choices=AuthorizationBoundary.choices, required=False)
    evidence_type = serializers.ChoiceField(choices=EvidenceType.choices, required=False)

    def predicate(self):
        wanted = self.validated_data

        def keep(situation):
            return (
                ("surface" not in wanted or wanted["surface"] in situation.surfaces)
                and (
                    "boundary" not in wanted
                    or wanted["boundary"] == situation.authorization_boundary
                )
                and (
                    "evidence_type" not in wanted
                    or wanted["evidence_type"] in situation.evidence_types
                )
            )

        return keep


SITUATION_FILTER_PARAMETERS = [
    OpenApiParameter(
        "surface", enum=Surface.values, description=_("Only situations on this surface.")
    ),
    OpenApiParameter(
        "boundary",
        enum=AuthorizationBoundary.values,
        description=_("Only situations with this authorization boundary."),
    ),
    OpenApiParameter(
        "evidence_type",
        enum=EvidenceType.values,
        description=_("Only situations that require this evidence type."),
    ),
]


class SituationFilterMixin:
    def get_serializer_context(self):
        context = super().get_serializer_context()
        situation_filter = SituationFilter(data=self.request.query_params)
        situation_filter.is_valid(raise_exception=True)
        context["situation_filter"] = situation_filter.predicate()
        return context


@extend_schema(
    summary=_("Markets of the current edition, in the method's order"),
    parameters=SITUATION_FILTER_PARAMETERS,
)
class MarketList(SituationFilterMixin, generics.ListAPIView):
    serializer_class = MarketEditionSummarySerializer
    pagination_class = None  # six markets: the whole set, always in one order

    def get_queryset(self):
        return market_edition_list()


@extend_schema(
    summary=_("One market with its full edition profile"), parameters=SITUATION_FILTER_PARAMETERS
)
class MarketDetail(SituationFilterMixin, generics.RetrieveAPIView):
    serializer_class = MarketEditionDetailSerializer

    def get_object(self):
        try:
            return market_edition_get(self.kwargs["code"])
        except MarketEdition.DoesNotExist as missing:
            raise Http404 from missing


class SituationDetail(APIView):
    """Read a situation; a local editor with competence for the market may change it."""

    def get_permissions(self):
        return [IsAuthenticated()] if self.request.method == "PATCH" else []

    def _situation(self, code, situation_id):
        try:
            market_edition = market_edition_get(code)
            return market_edition.situations.get(situation_id=situation_id)
        except (MarketEdition.DoesNotExist, IntegrationSituation.DoesNotExist) as missing:
            raise Http404 from missing

    @extend_schema(summary=_("One integration situation"), responses=SituationSerializer)
    def get(self, request, code, situation_id):
        return Response(SituationSerializer(self._situation(code, situation_id)).data)

    @extend_schema(
        summary=_("Change an integration situation (local editors of the market)"),
        description=_(
            "Only the fields sent change. Needs a sign-in with a current competence for the "
            "situation's market."
        ),
        request=SituationUpdateSerializer,
        responses=SituationSerializer,
    )
    def patch(self, request, code, situation_id):
        situation = self._situation(code, situation_id)
        changes = SituationUpdateSerializer(data=request.data)
        changes.is_valid(raise_exception=True)
        updated = situation_update(
            situation=situation, changes=changes.validated_data, actor=request.user
        )
        return Response(SituationSerializer(updated).data)
