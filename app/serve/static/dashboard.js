// The memory dashboard: reads /v1/memory/users, /status and /stats and draws them with the
// vendored Chart.js. Everything it shows is set as text (never as HTML).
"use strict";

const $ = (id) => document.getElementById(id);

// a count and its noun, in the right number ("1 turn", "2 turns")
function total(id, count, noun) {
  $(id).textContent = count;
  $(id).nextElementSibling.textContent = count === 1 ? noun : noun + "s";
}
const charts = {};
const TIER_NAMES = { working: "working", long_term: "long-term", archive: "archive" };

function headers() {
  const key = sessionStorage.getItem("huichat-key") || "";
  return key ? { Authorization: "Bearer " + key } : {};
}

async function getJSON(path) {
  const response = await fetch(path, { headers: headers() });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const reason = (body.error && body.error.message) || response.statusText;
    throw Object.assign(new Error(response.status + ": " + reason), { status: response.status });
  }
  return body;
}

function draw(id, type, labels, values, label) {
  const canvas = $(id);
  const empty = canvas.parentElement.querySelector(".empty");
  const has = values.some((v) => v > 0);
  empty.hidden = has;
  canvas.hidden = !has;
  if (charts[id]) {
    charts[id].destroy();
    delete charts[id];
  }
  if (!has) return;
  charts[id] = new Chart(canvas, {
    type,
    data: { labels, datasets: [{ label, data: values, borderWidth: 1 }] },
    options: {
      animation: false,
      maintainAspectRatio: false,
      plugins: { legend: { display: type === "doughnut" } },
      scales: type === "doughnut" ? {} : { y: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  });
}

function listTurns(id, rows, detail) {
  const list = $(id);
  list.replaceChildren();
  if (!rows.length) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = "nothing yet";
    list.append(li);
    return;
  }
  for (const row of rows) {
    const li = document.createElement("li");
    const code = document.createElement("code");
    code.textContent = row.id;
    const small = document.createElement("small");
    small.textContent = " " + detail(row) + " ";
    li.append(code, small, document.createTextNode(row.topic || row.snippet || ""));
    li.title = row.snippet || "";
    list.append(li);
  }
}

async function loadUsers() {
  const picker = $("user");
  const chosen = picker.value;
  const { users, current } = await getJSON("/v1/memory/users");
  picker.replaceChildren(
    ...users.map((u) => {
      const option = document.createElement("option");
      option.value = u.id;
      option.textContent = u.name;
      return option;
    })
  );
  picker.value = users.some((u) => u.id === chosen) ? chosen : current;
}

async function loadStats() {
  const user = encodeURIComponent($("user").value);
  const query = user ? "?user=" + user : "";
  const status = await getJSON("/v1/memory/status" + query);
  const badge = $("state");
  badge.textContent = "memory: " + status.memory;
  badge.className = "badge " + status.memory;
  badge.title = status.reason || "";
  if (status.memory !== "ok") {
    $("message").textContent = "Memory is degraded: " + status.reason;
    return;
  }
  const stats = await getJSON("/v1/memory/stats" + query);
  total("total-turns", stats.total_turns, "turn");
  total("total-sessions", stats.total_sessions, "session");
  total("total-accesses", stats.total_accesses, "recall");
  $("avg-importance").textContent = stats.avg_importance == null ? "–" : stats.avg_importance.toFixed(2);
  const tiers = stats.tiers || {};
  draw("tiers-chart", "doughnut", Object.keys(tiers).map((t) => TIER_NAMES[t] || t), Object.values(tiers), "turns");
  const histogram = stats.importance_histogram || [];
  const bins = histogram.map((_, i) => (i / histogram.length).toFixed(1) + "–" + ((i + 1) / histogram.length).toFixed(1));
  draw("importance-chart", "bar", bins, histogram, "turns");
  const weeks = stats.turns_per_week || [];
  draw("weeks-chart", "bar", weeks.map((w) => w.week), weeks.map((w) => w.turns), "turns");
  const important = stats.top_important || [];
  $("top-title").textContent = important.length ? "Top memories (importance)" : "Top memories (most recalled)";
  listTurns("top-list", important.length ? important : stats.top_accessed || [], (r) =>
    r.importance != null ? r.importance.toFixed(2) : "×" + r.access_count
  );
  listTurns("recent-list", stats.recent_accesses || [], (r) =>
    r.last_accessed_at ? new Date(r.last_accessed_at).toLocaleString() : ""
  );
}

async function reload(withUsers) {
  $("message").textContent = "";
  try {
    if (withUsers) await loadUsers();
    await loadStats();
  } catch (error) {
    // the API's 401 says to send a header: here the key is typed into the page
    const untyped = error.status === 401 && !sessionStorage.getItem("huichat-key");
    $("message").textContent = untyped
      ? "Type an API key (hc_…) into the API key field above to see a memory."
      : error.message;
  }
}

window.addEventListener("DOMContentLoaded", () => {
  $("key").value = sessionStorage.getItem("huichat-key") || "";
  $("key").addEventListener("change", () => {
    sessionStorage.setItem("huichat-key", $("key").value.trim());
    reload(true);
  });
  $("user").addEventListener("change", () => reload(false));
  $("reload").addEventListener("click", () => reload(true));
  reload(true);
});
