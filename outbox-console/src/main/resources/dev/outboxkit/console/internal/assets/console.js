// outboxkit console: the backlog chart and confirmations. Loaded as a file: the pages allow no inline script.
(function () {
  'use strict';

  function chart(el) {
    var plot = null;
    function draw(data) {
      var series = [data.t, data.backlog];
      if (plot) { plot.setData(series); return; }
      plot = new uPlot({
        width: Math.max(300, el.clientWidth - 10), height: 170,
        // One sample alone would stretch the time axis over years: show at least the two minutes around it.
        scales: { x: { time: true, range: function (u, min, max) { return max - min < 120 ? [min - 60, max + 60] : [min, max]; } } },
        series: [{}, { label: 'Unpublished events', stroke: '#0a3069', width: 2, points: { show: true } }],
        axes: [{}, { label: 'events' }]
      }, series, el);
    }
    function refresh() {
      fetch(el.getAttribute('data-src'), { credentials: 'same-origin', cache: 'no-store' })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (d) { if (d) { draw(d); } })
        .catch(function () { /* the next refresh tries again */ });
    }
    refresh();
    setInterval(refresh, 5000);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var el = document.getElementById('backlog-chart');
    if (el && window.uPlot) { chart(el); }
    document.addEventListener('submit', function (e) {
      var button = e.submitter;
      var question = button && button.getAttribute('data-confirm');
      if (question && !window.confirm(question)) { e.preventDefault(); }
    });
  });
})();
