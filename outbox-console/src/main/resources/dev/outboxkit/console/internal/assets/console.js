// outboxkit console: the overview's charts and confirmations. Loaded as a file: the pages allow no inline script.
(function () {
  'use strict';

  function chart(el) {
    var plot = null;
    var end = Date.now() / 1000;
    function draw(data) {
      var series = [data.t, data[el.getAttribute('data-series')]];
      if (data.t.length > 0) { end = data.t[data.t.length - 1]; }
      if (plot) { plot.setData(series); return; }
      plot = new uPlot({
        width: Math.max(300, el.clientWidth - 10), height: 170,
        // Always the hour up to the newest sample, so a few samples do not stretch the axis; counts start at zero,
        // and a series with no value yet (no rate before the second sample) still gets a readable axis.
        scales: {
          x: { time: true, range: function () { return [end - 3600, end]; } },
          y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } }
        },
        series: [{}, { label: el.getAttribute('data-label'), stroke: '#0a3069', width: 2, points: { show: true } }],
        axes: [{}, {}]
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
    if (window.uPlot) {
      document.querySelectorAll('.chart[data-src]').forEach(chart);
    }
    document.addEventListener('submit', function (e) {
      var button = e.submitter;
      var question = button && button.getAttribute('data-confirm');
      if (question && !window.confirm(question)) { e.preventDefault(); }
    });
  });
})();
