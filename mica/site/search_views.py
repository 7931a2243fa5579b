from django.shortcuts import render
from django.utils import translation
from django.views.decorators.http import require_safe

from mica.site.search import MAX_QUERY_CHARS, MAX_WORDS, search


@require_safe
def search_page(request):
    # With repeated parameters the last one wins, as for every GET form.
    results = search(request.GET.get("q", ""), translation.get_language())
    response = render(
        request,
        "site/search.html",
        {
            "results": results,
            "max_query_chars": MAX_QUERY_CHARS,
            "max_words": MAX_WORDS,
            # A results page is a view of other pages, never a page to index.
            "indexable": False,
        },
    )
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response
