// The operator console: signs in (OAuth password grant or a pasted token), reads
// /api/admin/jobs/stats and the queued jobs, and re-reads them whenever the server announces
// a job change on the Pusher-protocol channel private-admin.jobs (no polling). Plain browser
// JavaScript, no build step; the chart is uPlot.
"use strict";

const $ = (selector) => document.querySelector(selector);
let token = sessionStorage.getItem("sf-console-token");
// Whether the page signed in itself (password form): signing out then ends that session on the server.
let ownSession = sessionStorage.getItem("sf-console-own-session") === "1";
let chart;
let socket;

/** Calls the API with the token; throws the API's message on an error status. */
async function api(method, path, body) {
  const response = await fetch(`/api${path}`, {
    method,
    headers: { accept: "application/json", authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(data.message || `HTTP ${response.status}`), { status: response.status });
  return data;
}

function cell(row, text) {
  const td = document.createElement("td");
  td.textContent = text;
  row.append(td);
  return td;
}

function fill(table, rows, render) {
  const body = $(`${table} tbody`);
  body.replaceChildren(...rows.map((item) => {
    const tr = document.createElement("tr");
    render(tr, item);
    return tr;
  }));
}

function button(row, label, action) {
  const b = document.createElement("button");
  b.textContent = label;
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      await action();
      $("#action-error").textContent = "";
    } catch (error) {
      $("#action-error").textContent = error.message;
      b.disabled = false;
    }
  });
  cell(row, "").append(b);
}

const ago = (iso) => `${Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))} s ago`;

function render(stats, queued) {
  const t = stats.totals;
  $("#totals").replaceChildren(...[
    ["Queued", t.queued], ["Running", t.running], ["Finished (1 h)", t.finished_last_hour],
    ["Failed (1 h)", t.failed_last_hour], ["Failure rate", `${(t.failure_rate * 100).toFixed(1)} %`], ["Workers", stats.workers.length],
  ].map(([label, value]) => {
    const div = document.createElement("div");
    div.innerHTML = "<strong></strong><span></span>";
    div.firstChild.textContent = value;
    div.lastChild.textContent = label;
    return div;
  }));
  fill("#kinds", stats.kinds, (tr, k) => { cell(tr, k.kind); cell(tr, k.queued); cell(tr, k.running); });
  fill("#workers", stats.workers, (tr, w) => { cell(tr, w.id); cell(tr, w.hostname); cell(tr, w.pid); cell(tr, w.concurrency ?? "?"); cell(tr, ago(w.beat_at)); });
  $("#web").textContent = `Process ${stats.web.pid}: ${stats.web.websocket_connections} WebSocket connection(s).`;
  fill("#queued", queued, (tr, j) => {
    cell(tr, `#${j.id}`); cell(tr, j.kind); cell(tr, ago(j.created_at));
    button(tr, "Cancel", () => api("POST", `/jobs/${j.id}/cancel`).then(refresh));
  });
  fill("#failed", stats.failed, (tr, j) => {
    cell(tr, `#${j.id}`); cell(tr, j.kind); cell(tr, j.error ?? ""); cell(tr, j.finished_at ? ago(j.finished_at) : "");
    button(tr, "Retry", () => api("POST", `/admin/jobs/${j.id}/retry`).then(refresh));
  });
  fill("#slowest", stats.slowest, (tr, j) => { cell(tr, `#${j.id}`); cell(tr, j.kind); cell(tr, j.status); cell(tr, `${j.duration_ms} ms`); });
  const data = [stats.throughput.map((b) => Date.parse(b.at) / 1000), stats.throughput.map((b) => b.succeeded), stats.throughput.map((b) => b.failed)];
  if (!chart) {
    chart = new uPlot({
      width: Math.min(900, window.innerWidth - 60), height: 220,
      series: [{}, { label: "Succeeded", stroke: "#2e9e5b" }, { label: "Failed", stroke: "#b3261e" }],
    }, data, $("#chart"));
  } else chart.setData(data);
}

let refreshing = null;
let again = false;
/** Re-reads everything; changes arriving meanwhile cause one more read, not one each. */
async function refresh() {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      const [stats, queued] = await Promise.all([api("GET", "/admin/jobs/stats"), api("GET", "/admin/jobs?status=queued&per_page=20")]);
      render(stats, queued.data);
    } while (again);
  })().finally(() => (refreshing = null));
  return refreshing;
}

/** Subscribes to private-admin.jobs over the Pusher protocol (v7) and refreshes on every JobChanged. */
async function listen() {
  const config = await (await fetch("/api/realtime/config")).json();
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}${config.ws_path}?protocol=7&client=console&version=1`);
  socket.addEventListener("message", async (message) => {
    const frame = JSON.parse(message.data);
    const data = typeof frame.data === "string" ? JSON.parse(frame.data) : frame.data;
    if (frame.event === "pusher:connection_established") {
      const channel = "private-admin.jobs";
      const { auth, channel_data } = await api("POST", "/broadcasting/auth", { socket_id: data.socket_id, channel_name: channel });
      socket.send(JSON.stringify({ event: "pusher:subscribe", data: { channel, auth, channel_data } }));
    } else if (frame.event === "pusher_internal:subscription_succeeded") {
      $("#live").textContent = "live";
      $("#live").classList.add("on");
      refresh();
    } else if (frame.event === "pusher:ping") {
      socket.send(JSON.stringify({ event: "pusher:pong", data: {} }));
    } else if (frame.event === "JobChanged" || frame.event === "EventsMissed") {
      // EventsMissed: the server's LISTEN connection was away, announcements may be lost.
      refresh();
    }
  });
  socket.addEventListener("close", () => {
    $("#live").textContent = "offline";
    $("#live").classList.remove("on");
    if (token) setTimeout(listen, 2000); // the server restarted or moved us: reconnect
  });
}

async function start() {
  try {
    await refresh();
  } catch (error) {
    $("#sign-in-error").textContent = error.status === 403 ? "This account is not an administrator (or the token lacks the admin scope)." : error.message;
    await signOut();
    return;
  }
  $("#sign-in").hidden = true;
  $("#console").hidden = false;
  $("#sign-out").hidden = false;
  listen();
}

/** Remembers the token the page works with; `own` when the page signed in with it. */
function keep(value, own) {
  token = value;
  ownSession = own;
  sessionStorage.setItem("sf-console-token", value);
  sessionStorage.setItem("sf-console-own-session", own ? "1" : "0");
}

async function signOut() {
  // A session the page started ends on the server too (POST /api/logout: the access token and
  // its refresh tokens), not only in this tab; a pasted token is the operator's and stays.
  if (token && ownSession) {
    await fetch("/api/logout", { method: "POST", headers: { authorization: `Bearer ${token}` } }).catch(() => {});
  }
  token = null;
  ownSession = false;
  sessionStorage.removeItem("sf-console-token");
  sessionStorage.removeItem("sf-console-own-session");
  socket?.close();
  $("#sign-in").hidden = false;
  $("#console").hidden = true;
  $("#sign-out").hidden = true;
}

$("#password-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = Object.fromEntries(new FormData(event.target));
  // The code is asked only of accounts with two-factor authentication.
  if (!form.otp) delete form.otp;
  const response = await fetch("/api/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "password", scope: "*", ...form }),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    $("#sign-in-error").textContent = data.error_description || data.error || "Sign-in failed.";
    return;
  }
  keep(data.access_token, true);
  start();
});

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  keep(new FormData(event.target).get("token").trim(), false);
  start();
});

$("#sign-out").addEventListener("click", signOut);
if (token) start();
