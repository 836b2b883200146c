// The served page's own script (a file, so the page's Content-Security-Policy needs no
// inline script): a closed session says "Disconnected" and why (the server's close reason:
// the app process ended, too many sessions, the server stopping), and the button reloads.
(function () {
  "use strict";
  var Native = window.WebSocket;
  function say(event) {
    var text = "Disconnected" + (event && event.reason ? ": " + event.reason : ".");
    var box = document.getElementById("npa-closed-message");
    if (box) {
      box.textContent = text;
    }
    document.body.classList.add("-closed");
  }
  function Watched(url, protocols) {
    var socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    socket.addEventListener("close", say);
    return socket;
  }
  Watched.prototype = Native.prototype;
  ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (k) {
    Watched[k] = Native[k];
  });
  window.WebSocket = Watched;
  window.addEventListener("DOMContentLoaded", function () {
    var again = document.getElementById("npa-reconnect");
    if (again) {
      again.addEventListener("click", function () {
        window.location.reload();
      });
    }
  });
})();
