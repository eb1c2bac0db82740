// Lookout panel: small conveniences. Every page works without them.
"use strict";
(function () {
  // Copy buttons beside snippets (shown only where the clipboard works).
  document.querySelectorAll("button.copy[data-copy]").forEach(function (b) {
    if (!navigator.clipboard) return;
    b.hidden = false;
    b.addEventListener("click", function () {
      var src = document.getElementById(b.dataset.copy);
      if (!src) return;
      navigator.clipboard.writeText(src.textContent).then(function () {
        var was = b.textContent;
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = was; }, 1500);
      });
    });
  });

  // Forms marked data-autosubmit apply a changed select at once (their
  // submit button stays for browsers without JavaScript).
  document.querySelectorAll("form[data-autosubmit]").forEach(function (f) {
    f.querySelectorAll("select").forEach(function (s) {
      s.addEventListener("change", function () { f.requestSubmit ? f.requestSubmit() : f.submit(); });
    });
  });
})();
