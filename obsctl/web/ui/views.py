"""The dashboard's pages: each one calls the service functions the CLI and the API call, and
renders what they return. Nothing here reads the store directly."""

from __future__ import annotations

from urllib.parse import quote

from flask import Blueprint, Response, current_app, redirect, render_template, request, url_for
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException

import obsctl.web.ui.access as access
from obsctl.errors import InvalidInput, NotFound, ObsctlError, QueryTimeout, StorageError
from obsctl.services import alerts as alert_service
from obsctl.services import dashboard as dashboard_service
from obsctl.services import postmortem as postmortem_service
from obsctl.services import scorecards as scorecard_service
from obsctl.services import search as search_service
from obsctl.services import sessions as session_service
from obsctl.services import sla as sla_service
from obsctl.services import triage as triage_service
from obsctl.services import webhooks as webhook_service
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.pricing import format_usd, pricer_for
from obsctl.services.sessions.compare import compare_sessions
from obsctl.services.sessions.export import export_session
from obsctl.services.sessions.filters import sort_choices
from obsctl.services.sessions.summary import session_summary
from obsctl.services.sla.summary import sla_summary
from obsctl.vocabulary import SESSION_STATUSES
from obsctl.web.http import get_settings, get_store
from obsctl.web.routes.alerts import send_deliveries
from obsctl.web.security import auth_failures
from obsctl.web.ui.present import (
    compact_json,
    event_rows,
    fmt_ms,
    fmt_num,
    pretty_json,
    sparkline_points,
    timeline,
)

CACHE_KEY = "obsctl_dashboard_cache"
blueprint = Blueprint("dashboard", __name__, template_folder="templates", static_folder="static",
                      static_url_path="/ui/static")

PAGE_SIZE = 50
# A session page shows this many events; the export has them all.
SHOWN_EVENTS = 1000

NAV = (
    ("overview", "Overview"),
    ("sessions", "Sessions"),
    ("search", "Search"),
    ("compare", "Compare"),
    ("alerts", "Alerts"),
    ("webhooks", "Webhooks"),
    ("sla", "SLA"),
    ("scorecards", "Scorecards"),
)


def session_path(session_id: str, suffix: str = "") -> str:
    """The page of a session: its id escaped whole (a `/` in an id is %2F, web/rawpath.py)."""
    return f"/ui/sessions/{quote(session_id, safe='')}{suffix}"


@blueprint.app_template_global()
def nav_items():
    return NAV


blueprint.add_app_template_global(access.csrf_token, "csrf_token")
blueprint.add_app_template_global(session_path, "session_path")
blueprint.add_app_template_global(lambda agent: f"/ui/scorecards/{quote(agent, safe='')}", "scorecard_path")
blueprint.add_app_template_filter(fmt_ms, "ms")
blueprint.add_app_template_filter(fmt_num, "num")
blueprint.add_app_template_filter(lambda v: "–" if v is None else format_usd(v), "usd")
blueprint.add_app_template_filter(pretty_json, "pretty")
blueprint.add_app_template_filter(compact_json, "compact")
# Search snippets come with these marks around the matched words: the text is escaped, then
# the marks become <mark> elements (control characters, so no event text can forge one).
_MARKS = ("\x02", "\x03")
blueprint.add_app_template_filter(
    lambda text: Markup(str(escape(text)).replace(_MARKS[0], "<mark>").replace(_MARKS[1], "</mark>")),
    "marked")


@blueprint.app_context_processor
def _page_context():
    return {"login_required": access.login_required() if request.blueprint == "dashboard" else False}


@blueprint.before_request
def _gate():
    if request.endpoint == "dashboard.static":
        return None
    if request.method == "POST":
        if access.login_required():  # as the request gate allows under `obsctl serve`
            request.max_content_length = access.FORM_MAX_BYTES
        access.check_csrf()
    if request.endpoint == "dashboard.login" or access.logged_in():
        return None
    if request.method == "GET":
        return redirect(url_for("dashboard.login", next=request.full_path.rstrip("?")))
    return _error_page(401, "log in first")


@blueprint.after_request
def _headers(response):
    return access.add_security_headers(response)


def _error_page(status: int, message: str):
    return render_template("error.html", status=status, message=message, page=None), status


@blueprint.errorhandler(ObsctlError)
def _obsctl_error(exc: ObsctlError):
    if isinstance(exc, StorageError):
        raise exc  # the app's handler logs it and answers 500 without details
    return _error_page(404 if isinstance(exc, NotFound) else 504 if isinstance(exc, QueryTimeout) else 400,
                       exc.message)


@blueprint.errorhandler(HTTPException)
def _http_error(exc: HTTPException):
    return _error_page(exc.code or 500, exc.description or exc.name)


# -- access -------------------------------------------------------------------------------

@blueprint.route("/ui/login", methods=["GET", "POST"])
def login():
    settings = get_settings()
    target = access.safe_next(request.values.get("next"), url_for("dashboard.overview"))
    if not settings.api_key:
        return redirect(target)
    refusal = None
    if request.method == "POST":
        # Login attempts count against the address's failed key checks, as API requests do.
        refusal = auth_failures().check(request.remote_addr or "-", request.form.get("api_key", ""),
                                        settings.api_key)
        if refusal is None:
            access.log_in(settings.api_key)
            return redirect(target)
    page = render_template("login.html", page="login", next=target, problem=refusal and refusal.message)
    if refusal is None:
        return page
    headers = {"Retry-After": str(refusal.retry_after)} if refusal.retry_after else {}
    return page, refusal.status, headers


@blueprint.post("/ui/logout")
def logout():
    access.log_out()
    return redirect(url_for("dashboard.login"))


# -- pages --------------------------------------------------------------------------------

@blueprint.get("/")
def overview():
    data = dashboard_service.overview(get_store(), get_settings(), window=request.args.get("window"))
    return render_template("overview.html", page="overview", data=data,
                           windows=list(dashboard_service.WINDOWS))


# The session list's form fields: one value each in the form, repeatable in a URL.
_SESSION_FIELDS = ("agent", "model", "tool", "error_type", "tag", "metadata")
_SESSION_TEXTS = ("status", "since", "from", "to", "min_tokens", "max_tokens", "min_cost", "has_errors", "sort")


@blueprint.get("/ui/search")
def search():
    """Full-text search over what events said (services/search.py), newest first."""
    form = {name: (request.args.get(name) or "").strip() for name in ("q", "agent", "since")}
    found = None
    if form["q"]:
        found = search_service.search_events(get_store(), form["q"], agent=[form["agent"]] if form["agent"] else None,
                                             since=form["since"] or None, limit=PAGE_SIZE,
                                             mark_start=_MARKS[0], mark_end=_MARKS[1])
    return render_template("search.html", page="search", form=form, found=found)


@blueprint.get("/ui/sessions")
def sessions():
    # An empty form field is no filter (the API refuses an empty value).
    query = {name: [v for v in request.args.getlist(name) if v] for name in _SESSION_FIELDS}
    query.update({name: request.args.get(name) or None for name in _SESSION_TEXTS})
    query = {k: v for k, v in query.items() if v}
    given = {k: query.get(k) for k in _SESSION_FIELDS}
    given.update(status=query.get("status"), since=query.get("since"), from_=query.get("from"),
                 to=query.get("to"), sort=query.get("sort"), has_errors=_yes_no(query.get("has_errors")),
                 min_cost=query.get("min_cost"),
                 **{name: _whole(name, query.get(name)) for name in ("min_tokens", "max_tokens")})
    listing = session_service.list_sessions(get_store(), limit=PAGE_SIZE, cursor=request.args.get("cursor") or None,
                                            **given)
    first = url_for("dashboard.sessions", **query)
    more = url_for("dashboard.sessions", **query, cursor=listing["next"]) if listing["next"] else None
    form = {k: v[0] if isinstance(v, list) else v for k, v in query.items()}  # what the fields show
    return render_template("sessions.html", page="sessions", listing=listing, form=form,
                           statuses=SESSION_STATUSES, sorts=sort_choices(), first=first, more=more,
                           paged="cursor" in request.args)


def _yes_no(text: str | None) -> bool | None:
    if text in (None, "yes", "no"):
        return None if text is None else text == "yes"
    raise InvalidInput(f"has_errors must be yes or no; got {text[:40]!r}")


def _whole(name: str, text: str | None) -> int | None:
    if text is None:
        return None
    if not text.isdigit():
        raise InvalidInput(f"{name} must be a whole number, got {text[:40]!r}")
    return int(text)


@blueprint.get("/ui/sessions/<path:session_id>")
def session_page(session_id: str):
    store = get_store()
    detail = session_service.get_session(store, session_id, limit=SHOWN_EVENTS)
    shown = detail.pop("events")
    summary = session_summary(store, session_service.require_session(store, session_id))
    line = timeline(detail, shown)
    return render_template("session.html", page="sessions", session=detail, summary=summary,
                           rows=event_rows(shown, line), timeline=line,
                           hidden=max(0, detail["event_count"] - len(shown)))


LIVE_HEARTBEAT_S = 3


@blueprint.get("/ui/live")
def live():
    """New events as they are stored (Server-Sent Events, as GET /events/stream), for the
    overview and an open session: the browser's EventSource sends the login cookie, which
    the API's X-API-Key cannot be."""
    from obsctl.models.sessions import EventSelection
    from obsctl.web.routes.follow import event_stream

    session_id = request.args.get("session") or None
    selection = EventSelection(session_ids=(session_id,) if session_id else ())
    # A short heartbeat: a page left or closed is noticed (its write fails) within seconds, and
    # its stream slot freed for the next page.
    return event_stream(get_store(), selection, lines=0, heartbeat=LIVE_HEARTBEAT_S,
                        after=request.args.get("after") or None)


@blueprint.get("/ui/sessions/<path:session_id>/export")
def session_export(session_id: str):
    stream = export_session(get_store(), session_id, request.args.get("format", "json"))
    return Response(b"".join(stream.chunks), content_type=stream.media_type,
                    headers={"Content-Disposition": f'attachment; filename="{stream.filename}"'})


@blueprint.get("/ui/sessions/<path:session_id>/triage")
def session_triage(session_id: str):
    report = triage_service.triage_session(get_store(), session_id, pricer=pricer_for(get_settings()))
    return render_template("triage.html", page="sessions", report=report)


@blueprint.get("/ui/sessions/<path:session_id>/postmortem")
def session_postmortem(session_id: str):
    report = postmortem_service.postmortem_session(get_store(), session_id,
                                                   pricer=pricer_for(get_settings()))
    return render_template("postmortem.html", page="sessions", report=report)


@blueprint.get("/ui/compare")
def compare():
    a, b = (request.args.get("a") or "").strip(), (request.args.get("b") or "").strip()
    comparison = compare_sessions(get_store(), a, b) if a and b else None
    return render_template("compare.html", page="compare", a=a, b=b, comparison=comparison)


@blueprint.get("/ui/alerts")
def alerts():
    store = get_store()
    only_open = request.args.get("unacknowledged") == "true"
    return render_template("alerts.html", page="alerts", rules=alert_rules.list_rules(store)["rules"],
                           events=alert_service.list_alert_events(store, limit=100, unacknowledged=only_open),
                           only_open=only_open)


@blueprint.post("/ui/alerts/<path:alert_id>/acknowledge")
def acknowledge(alert_id: str):
    alert_service.acknowledge_alert(get_store(), alert_id)
    send_deliveries(get_store(), get_settings())  # the acknowledgement's webhooks, as the API does
    return redirect(url_for("dashboard.alerts"), 303)


@blueprint.get("/ui/webhooks")
def webhooks():
    store = get_store()
    status = request.args.get("status") or None
    return render_template("webhooks.html", page="webhooks", hooks=webhook_service.list_webhooks(store),
                           deliveries=webhook_service.list_deliveries(store, status=status, limit=100),
                           status=status)


@blueprint.post("/ui/webhooks/deliveries/<path:delivery_id>/retry")
def retry_delivery(delivery_id: str):
    webhook_service.retry_delivery(get_store(), get_settings(), delivery_id)
    status = request.form.get("status") or None
    return redirect(url_for("dashboard.webhooks", status=status), 303)


@blueprint.get("/ui/sla")
def sla():
    store = get_store()
    history = sla_service.sla_history(store, hours=24 * 7, limit=1000)
    return render_template("sla.html", page="sla", targets=sla_service.list_targets(store),
                           summary=sla_summary(store), history=history)


def _fleet():
    """The scorecards' fleet of the last 7 days and its open regressions, computed at most once
    a minute (ResultCache): every scorecard page within that minute is measured on one window."""
    store, settings = get_store(), get_settings()
    cache = current_app.extensions[CACHE_KEY]
    fleet = cache.get(("fleet",), lambda: scorecard_service.fleet_window(store, settings))
    regressions = cache.get(("regressions", fleet.until),
                            lambda: scorecard_service.fleet_regressions(store, settings, fleet))
    return cache, fleet, regressions


@blueprint.get("/ui/scorecards")
def scorecards():
    # One fleet computation for every card; each agent's daily trend is on its own page (a
    # trend is a scorecard computation per agent, too slow for twenty agents at once).
    cache, fleet, regressions = _fleet()
    cards = cache.get(("scorecards", fleet.until), lambda: scorecard_service.fleet_scorecards(
        get_store(), get_settings(), fleet, regressions))
    return render_template("scorecards.html", page="scorecards", cards=cards)


@blueprint.get("/ui/scorecards/<path:agent>")
def scorecard(agent: str):
    cache, fleet, regressions = _fleet()
    card = cache.get(("scorecard", agent, fleet.until), lambda: scorecard_service.agent_scorecard(
        get_store(), get_settings(), agent, fleet, regressions))
    trend = sparkline_points([p["overall_score"] for p in card["trend"]], width=280, height=60)
    return render_template("scorecard.html", page="scorecards", card=card, trend=trend)
