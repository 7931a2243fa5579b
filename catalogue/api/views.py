from django.http import Http404
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from catalogue.api.serializers import (
    FamilySerializer,
    InstanceListSerializer,
    InstanceQuerySerializer,
    TaskDetailSerializer,
    TaskSerializer,
)
from catalogue.forms import TaskFilterForm
from catalogue.instances import MAX_INSTANCES, generate_instances
from catalogue.models import TaskDefinition
from catalogue.selectors import family_list, task_filter, task_public_get, task_public_list

# One whole sentence a filter, so each reads naturally in Korean.
FILTER_DESCRIPTIONS = {
    "family": _("Only tasks with this family; an unknown value is ignored."),
    "market": _("Only tasks with this market; an unknown value is ignored."),
    "surface": _("Only tasks with this surface; an unknown value is ignored."),
    "termination_class": _("Only tasks with this termination class; an unknown value is ignored."),
    "complexity": _("Only tasks with this complexity; an unknown value is ignored."),
    "lifecycle": _("Only tasks with this lifecycle; an unknown value is ignored."),
}
FILTER_PARAMETERS = [
    OpenApiParameter(name, description=description)
    for name, description in FILTER_DESCRIPTIONS.items()
]


@extend_schema(summary=_("The task families, in the method's order"))
class FamilyList(generics.ListAPIView):
    serializer_class = FamilySerializer
    pagination_class = None

    def get_queryset(self):
        return family_list()


@extend_schema(
    summary=_("Public task definitions, filtered and paginated"), parameters=FILTER_PARAMETERS
)
class TaskList(generics.ListAPIView):
    serializer_class = TaskSerializer

    def get_queryset(self):
        form = TaskFilterForm(self.request.query_params, families=list(family_list()))
        return task_filter(task_public_list(), **form.filters())


def _public_task(slug):
    try:
        return task_public_get(slug)
    except TaskDefinition.DoesNotExist as missing:
        raise Http404 from missing


@extend_schema(summary=_("One public task definition with its contract"))
class TaskDetail(generics.RetrieveAPIView):
    serializer_class = TaskDetailSerializer

    def get_object(self):
        return _public_task(self.kwargs["slug"])


class TaskInstances(APIView):
    """Concrete, checkable instances generated from a task's parameter schema."""

    @extend_schema(
        summary=_("Deterministic instances of a public task for one market"),
        responses=InstanceListSerializer,
        parameters=[
            OpenApiParameter("market", required=True, description=_("A market code, e.g. KR.")),
            OpenApiParameter("seed", int, description=_("Same seed, same instances (default 0).")),
            OpenApiParameter(
                "n",
                int,
                description=format_lazy(_("How many, 1 to {max} (default 5)."), max=MAX_INSTANCES),
            ),
        ],
    )
    def get(self, request, slug):
        definition = _public_task(slug)
        version = definition.current_version
        markets = {a.market.code: a.market for a in version.applicability.all() if a.applies}
        query = InstanceQuerySerializer(data=request.query_params, market_codes=list(markets))
        query.is_valid(raise_exception=True)
        market = markets[query.validated_data["market"]]
        instances = generate_instances(
            version.parameter_schema,
            task_id=definition.slug,
            version=version.version,
            market={"code": market.code, "currency_code": market.currency_code},
            seed=query.validated_data["seed"],
            n=query.validated_data["n"],
        )
        return Response(
            {
                "task": definition.slug,
                "version": version.version,
                "market": market.code,
                "seed": query.validated_data["seed"],
                "instances": instances,
            }
        )
