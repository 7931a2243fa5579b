"""Geometry for the dot-matrix figures (drawn as SVG, each with a data-table alternative)."""

CELL, LEFT, TOP = 40, 44, 30


def dot_matrix(row_labels, column_labels, counts):
    """Rows × numbered columns; counts[r][c] is drawn as a dot carrying its number.

    Columns are numbered 1..n in the drawing; the caption lists the labels, so
    the figure never depends on colour or on reading rotated text.
    """
    heads = [{"number": i + 1, "x": LEFT + i * CELL + CELL // 2} for i in range(len(column_labels))]
    rows = []
    for r, label in enumerate(row_labels):
        y = TOP + r * CELL + CELL // 2
        cells = [
            {
                "x": LEFT + i * CELL + CELL // 2,
                "count": count,
                "radius": min(16, 6 + 4 * count),
                "label": column_labels[i],
            }
            for i, count in enumerate(counts[r])
        ]
        rows.append({"code": label, "y": y, "cells": cells})
    return {
        "width": LEFT + CELL * len(column_labels) + 4,
        "height": TOP + CELL * len(row_labels) + 4,
        "heads": heads,
        "rows": rows,
        "label_x": LEFT - 8,
    }
