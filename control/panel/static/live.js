// Lookout panel: the live stream (Server-Sent Events) and relative times.
// The pages work without it; it only adds what arrives after they load.
"use strict";
(function () {
  function short(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 172800) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }
  // Relative times ("3m ago", "in 4m") move on without a reload.
  function tick() {
    var now = Date.now();
    document.querySelectorAll("table.monitors time, .facts time").forEach(function (t) {
      var at = Date.parse(t.getAttribute("datetime"));
      if (isNaN(at) || /UTC$/.test(t.textContent)) return;
      var d = at - now;
      if (/ago$|just now/.test(t.textContent)) t.textContent = d > -1000 ? "just now" : short(-d) + " ago";
      else if (/^in |overdue$/.test(t.textContent)) t.textContent = d >= 0 ? "in " + short(d) : short(-d) + " overdue";
    });
  }
  setInterval(tick, 5000);

  // A form being sent decides where the page goes next (e.g. the delete's
  // redirect), not the stream.
  var submitting = false;
  document.addEventListener("submit", function () { submitting = true; });

  var dot = document.getElementById("live-state");
  function connected(on) { if (dot) dot.classList.toggle("on", on); }

  // A monitor's page: new events on top, the status block replaced.
  var status = document.getElementById("status");
  if (status && window.EventSource) {
    var es = new EventSource(status.dataset.live);
    es.onopen = function () { connected(true); };
    es.onerror = function () { connected(false); };
    es.addEventListener("event", function (m) {
      var d = JSON.parse(m.data), body = document.getElementById("events");
      if (!body || body.querySelector('tr[data-seq="' + d.seq + '"]')) return;
      body.insertAdjacentHTML("afterbegin", d.html);
      body.firstElementChild.classList.add("fresh");
      var none = document.getElementById("no-events");
      if (none) none.remove();
      while (body.children.length > 200) body.lastElementChild.remove();
    });
    es.addEventListener("status", function (m) {
      var facts = status.querySelector(".facts");
      if (facts) facts.outerHTML = JSON.parse(m.data).html;
    });
    es.addEventListener("executions", function (m) {
      var body = document.getElementById("executions");
      if (body) body.innerHTML = JSON.parse(m.data).html;
    });
    es.addEventListener("deleted", function () {
      es.close();
      if (!submitting) location.href = "/";
    });
  }

  // The list: on a change, fetch the page again and swap the list, the
  // counts and the title (at most every 2 seconds).
  var counts = document.getElementById("counts");
  if (counts && window.EventSource) {
    var pending = false;
    var refresh = function () {
      if (pending) return;
      pending = true;
      setTimeout(function () {
        fetch(location.href, { credentials: "same-origin" }).then(function (r) {
          return r.ok ? r.text() : Promise.reject(r.status);
        }).then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          ["counts", "list"].forEach(function (id) {
            var fresh = doc.getElementById(id), old = document.getElementById(id);
            if (fresh && old) old.innerHTML = fresh.innerHTML;
          });
          document.title = doc.title;
        }).catch(function () {}).then(function () { pending = false; });
      }, 2000);
    };
    var ls = new EventSource(counts.dataset.live);
    ls.addEventListener("changed", refresh);
  }
})();
