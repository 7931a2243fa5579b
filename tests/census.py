"""The write-path census's machinery: discovery of every write path, a fresh
connection's view of the database, and a browser's reading of a form.

Discovery rules (each kind is an entry `(kind, identifier)` of the census):

- "form": every route of the site outside the admin and the API whose view accepts
  POST (or PUT, PATCH, DELETE). Class-based views accept what `http_method_names`
  allows and the class implements. A function view's accepted methods are read from
  the `require_http_methods` family of decorators (`require_POST`, `require_safe`,
  ...) anywhere in its decorator chain (followed through `__wrapped__` and closures,
  so `public_page_cache(require_safe(view))` counts as GET/HEAD). A view with no such
  decorator answers every method, POST included, so it is listed too: a new form
  without a decorator fails the census, and a read-only one is listed with its reason.
- "api": every operation of the OpenAPI schema with a method that writes (POST,
  PUT, PATCH, DELETE); every write method of every API view must be in the schema.
- "admin-add", "admin-change", "admin-delete": one each per model registered in the
  admin, offered or not (a superuser's permissions decide; the census says why one is
  not offered or writes nothing).
- "admin-action": every action a superuser is offered on a model's list, Django's
  `delete_selected` included where deleting is allowed.
- "admin-url": every admin URL outside the standard model URLs (the admin site's own,
  and those a `ModelAdmin.get_urls` adds) whose view accepts POST by the rule above.
- "command": every management command whose module lives in this project.
"""

from html.parser import HTMLParser
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
EVERY_METHOD = None  # what a view answers when nothing restricts its methods


# --- Discovery ------------------------------------------------------------------------


def in_project(path):
    path = Path(path).resolve()
    return path.is_relative_to(PROJECT_ROOT) and not any(
        part in {".venv", "site-packages"} for part in path.relative_to(PROJECT_ROOT).parts
    )


def accepted_methods(view):
    """The HTTP methods a view answers, upper case; EVERY_METHOD when nothing restricts them."""
    view_class = getattr(view, "view_class", None) or getattr(view, "cls", None)
    if view_class is not None:
        return {
            name.upper()
            for name in view_class.http_method_names
            if hasattr(view_class, name) or (name == "head" and hasattr(view_class, "get"))
        }
    seen, todo = set(), [view]
    while todo:
        function = todo.pop(0)
        function = getattr(function, "__func__", function)  # a bound method's function
        if id(function) in seen:
            continue
        seen.add(id(function))
        code = getattr(function, "__code__", None)
        cells = getattr(function, "__closure__", None) or ()
        names = code.co_freevars if code else ()
        for name, cell in zip(names, cells, strict=False):
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if name == "request_method_list":
                return {method.upper() for method in contents}
            if callable(contents) and not isinstance(contents, type):
                todo.append(contents)
        if hasattr(function, "__wrapped__"):
            todo.append(function.__wrapped__)
    return EVERY_METHOD


def accepts_writes(view):
    methods = accepted_methods(view)
    return methods is EVERY_METHOD or bool(methods & WRITE_METHODS)


def _walk(patterns, namespace=""):
    from django.urls import URLPattern, URLResolver

    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = ":".join(filter(None, [namespace, pattern.namespace]))
            yield from ((pattern, *rest) for rest in _walk(pattern.url_patterns, inner))
        elif isinstance(pattern, URLPattern):
            yield (pattern, namespace)


def _route(chain):
    return "".join(str(p.pattern) for p in chain[:-1])


def public_form_routes():
    """{identifier: view} of every page route (not admin, not API) that accepts a write."""
    from django.urls import URLResolver, get_resolver

    found = {}
    for chain in _walk(get_resolver().url_patterns):
        *patterns, namespace = chain
        resolvers = [p for p in patterns if isinstance(p, URLResolver)]
        if any(r.app_name == "admin" for r in resolvers):
            continue
        if patterns and isinstance(patterns[0], URLResolver) and str(patterns[0].pattern) == "api/":
            continue
        leaf = patterns[-1]
        if not accepts_writes(leaf.callback):
            continue
        name = ":".join(filter(None, [namespace, leaf.name])) or _route(chain) + str(leaf.pattern)
        found[name] = leaf.callback
    return found


def api_write_operations():
    """{"METHOD /path"} of the schema, after checking no write method is left out of it."""
    from django.urls import URLResolver, get_resolver
    from drf_spectacular.generators import SchemaGenerator
    from rest_framework.views import APIView

    generator = SchemaGenerator()
    schema = generator.get_schema(request=None, public=True)
    operations = {
        f"{method.upper()} {path}"
        for path, methods in schema["paths"].items()
        for method in methods
        if method.upper() in WRITE_METHODS
    }
    hidden = [
        f"{method} {path}"
        for path, _regex, method, _view in generator._get_paths_and_endpoints()
        if method.upper() in WRITE_METHODS and f"{method.upper()} {path}" not in operations
    ]
    assert not hidden, f"API write operations left out of the schema: {hidden}"
    api = next(
        p
        for p in get_resolver().url_patterns
        if isinstance(p, URLResolver) and str(p.pattern) == "api/"
    )
    not_drf = [
        str(chain[-2].pattern)
        for chain in _walk(api.url_patterns)
        if not issubclass(getattr(chain[-2].callback, "cls", type(None)), APIView)
    ]
    assert not not_drf, f"API routes that are not DRF views (not in the schema): {not_drf}"
    return operations


def superuser_request(path="/admin/"):
    """A request from an (unsaved) active superuser: what the admin offers at most."""
    from django.contrib.auth.models import User
    from django.test import RequestFactory

    request = RequestFactory().get(path)
    request.user = User(username="census-discovery", is_superuser=True, is_staff=True)
    # Who has also confirmed a second-factor code this session (django-otp's middleware
    # says so on a real request): some admin offers more only then.
    request.user.is_verified = lambda: True
    return request


STANDARD_MODEL_URLS = {"changelist", "add", "history", "delete", "change", None}


def admin_entries():
    """{(kind, identifier)} of the admin: per model add/change/delete, actions, extra URLs."""
    from django.contrib import admin

    site = admin.site
    request = superuser_request()
    entries = set()
    for model, model_admin in site._registry.items():
        label = model._meta.label
        entries |= {("admin-add", label), ("admin-change", label), ("admin-delete", label)}
        entries |= {
            ("admin-action", f"{label}:{name}") for name in model_admin.get_actions(request)
        }
        info = f"{model._meta.app_label}_{model._meta.model_name}_"
        for pattern in model_admin.get_urls():
            suffix = (pattern.name or "").removeprefix(info) or None
            if suffix in STANDARD_MODEL_URLS:
                continue
            if accepts_writes(pattern.callback):
                entries.add(("admin-url", f"admin:{pattern.name}"))
    for pattern in site.get_urls():
        if getattr(pattern, "name", None) is None:
            continue  # the per-model includes, walked above
        if accepts_writes(pattern.callback):
            entries.add(("admin-url", f"admin:{pattern.name}"))
    return entries


def project_commands():
    """Names of the management commands whose modules live in this project."""
    from django.apps import apps
    from django.core.management import get_commands

    paths = {config.name: config.path for config in apps.get_app_configs()}
    return {name for name, app in get_commands().items() if app in paths and in_project(paths[app])}


def discovered_write_paths():
    entries = {("form", name) for name in public_form_routes()}
    entries |= {("api", operation) for operation in api_write_operations()}
    entries |= admin_entries()
    entries |= {("command", name) for name in project_commands()}
    return entries


# --- A fresh connection's view ------------------------------------------------------------


class Observer:
    """A second connection to the test database: it sees only what is committed.

    It runs in autocommit, so every read sees everything committed before it.
    """

    def __init__(self):
        from django.db import DEFAULT_DB_ALIAS, connections

        self.connection = connections.create_connection(DEFAULT_DB_ALIAS)

    def rows(self, queryset, *fields):
        """The committed rows of `queryset` (values of `fields`, the pk by default)."""
        from django.db import OperationalError

        query = queryset.values_list(*(fields or ("pk",))).query
        sql, params = query.get_compiler(connection=self.connection).as_sql()
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(sql, params)
                return [row if len(row) > 1 else row[0] for row in cursor.fetchall()]
        except OperationalError as locked:  # SQLite: another connection holds a write lock
            raise AssertionError(
                f"a fresh connection cannot read ({locked}): a transaction is still open "
                "after the answer, so what it acknowledged is not committed"
            ) from locked

    def count(self, queryset):
        return len(self.rows(queryset))

    def value(self, queryset, field):
        values = self.rows(queryset, field)
        assert len(values) == 1, f"expected one committed row, found {len(values)}"
        return values[0]

    def fingerprint(self):
        """{table: committed row count} of every table of the project's models."""
        from django.db import connection as default

        tables = sorted(default.introspection.django_table_names(only_existing=True))
        counts = {}
        with self.connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"SELECT COUNT(*) FROM {default.ops.quote_name(table)}")
                counts[table] = cursor.fetchone()[0]
        return counts

    def close(self):
        self.connection.close()


def transaction_left_open(connection):
    """Whether the request's connection still holds an open transaction."""
    if connection.in_atomic_block:
        return True
    if connection.connection is None:
        return False
    if connection.vendor == "sqlite":
        return connection.connection.in_transaction
    if connection.vendor == "postgresql":
        from psycopg.pq import TransactionStatus

        return connection.connection.info.transaction_status != TransactionStatus.IDLE
    return False


# --- A browser's reading of a form -------------------------------------------------------


class _FormReader(HTMLParser):
    """Every form of a page with the (name, value) pairs a browser would submit."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = []
        self._form = None
        self._select = None
        self._option = None
        self._textarea = None

    def handle_starttag(self, tag, attrs):
        attrs = {key: (value if value is not None else "") for key, value in attrs}
        if tag == "title":
            self.set_cdata_mode(tag)  # a browser reads a title's content as text, never tags
            return
        if tag == "form":
            self._form = {"attrs": attrs, "fields": [], "submits": []}
            self.forms.append(self._form)
            return
        if self._form is None:
            return
        name = attrs.get("name")
        disabled = "disabled" in attrs
        if tag == "input" and name and not disabled:
            kind = attrs.get("type", "text").lower()
            if kind in {"checkbox", "radio"}:
                if "checked" in attrs:
                    self._form["fields"].append((name, attrs.get("value", "on")))
            elif kind in {"submit", "image", "button"}:
                self._form["submits"].append((name, attrs.get("value", "")))
            elif kind != "file":
                self._form["fields"].append((name, attrs.get("value", "")))
        elif tag == "select" and name and not disabled:
            self._select = {"name": name, "multiple": "multiple" in attrs, "options": []}
        elif tag == "option" and self._select is not None:
            self._option = {
                "value": attrs.get("value"),
                "selected": "selected" in attrs,
                "text": "",
            }
            self._select["options"].append(self._option)
        elif tag == "textarea" and name and not disabled:
            self._textarea = {"name": name, "text": ""}

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea["text"] += data
        elif self._option is not None:
            self._option["text"] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "option":
            self._option = None
        elif tag == "select" and self._select is not None:
            options = self._select["options"]
            chosen = [o for o in options if o["selected"]]
            if not chosen and options and not self._select["multiple"]:
                chosen = options[:1]  # a browser submits the first option
            for option in chosen:
                value = option["value"] if option["value"] is not None else option["text"]
                self._form["fields"].append((self._select["name"], value))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            text = self._textarea["text"]
            # A browser drops the one line break that follows the start tag.
            text = text[1:] if text.startswith("\n") else text
            self._form["fields"].append((self._textarea["name"], text))
            self._textarea = None


def page_forms(page_html):
    reader = _FormReader()
    reader.feed(page_html)
    reader.close()
    return reader.forms


# Forms on every page that are not the page's own: the admin's sign-out button.
SHELL_FORMS = {"logout-form"}


def form_data(page_html, form_id=None):
    """{name: value or [values]} of a page's form (by id, or its only POST form)."""
    forms = [
        f
        for f in page_forms(page_html)
        if (
            form_id is None
            and f["attrs"].get("method", "").lower() == "post"
            and f["attrs"].get("id") not in SHELL_FORMS
        )
        or (form_id is not None and f["attrs"].get("id") == form_id)
    ]
    # The same form twice is one form to a user (the challenge page repeats its appeal
    # form: its title block holds the appeals section, and the og:title attribute that
    # repeats the title is cut short by a quote, so the markup after it is parsed).
    forms = [f for i, f in enumerate(forms) if f not in forms[:i]]
    assert len(forms) == 1, f"expected one form {form_id or 'that posts'}, found {len(forms)}"
    data = {}
    for name, value in forms[0]["fields"]:
        if "__prefix__" in name:
            continue  # the template row a script copies; Django ignores it anyway
        if name in data:
            previous = data[name]
            data[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            data[name] = value
    return data
