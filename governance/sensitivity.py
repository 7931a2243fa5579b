"""The sensitivity analysis every official figure is published with.

Seed: "No official figure may be published without a sensitivity analysis over the
scoring policy, showing how a ranking moves under alternative normalizations and
aggregations". Within each market and family, the publishable cells are ordered
under the policy's product and under each alternative (mica.scoring.sensitivity),
with how many places each cell moves.
"""

from mica import scoring


def _components(cell):
    parts = cell.components
    return (parts["accuracy"], parts["speed"], parts["cost"])


def gate_sensitivity(cells):
    """Per market and family, the orderings of its publishable cells and their shifts."""
    groups = {}
    for cell in cells:
        if cell.eligible and cell.components is not None:
            groups.setdefault((cell.market.code, cell.family.slug), {})[cell.cell_id] = _components(
                cell
            )
    analyses = []
    for (market, family), components in sorted(groups.items()):
        orderings = scoring.sensitivity(components)
        analyses.append(
            {
                "market": market,
                "family": family,
                "orderings": orderings,
                "rank_shifts": scoring.rank_shifts(orderings),
            }
        )
    return analyses
