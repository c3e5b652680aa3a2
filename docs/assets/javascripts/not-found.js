// The root 404 page of a static host answers every missing address. When the address is under
// a language's folder (/es/..., /da/...), show that language's own 404 page instead.
// The data (site root, language folders) is written by the build into #termbase-not-found.
(function () {
  var data = JSON.parse(document.getElementById("termbase-not-found").textContent);
  var path = location.pathname;
  for (var i = 0; i < data.languages.length; i++) {
    var folder = data.root + data.languages[i] + "/";
    if (path.indexOf(folder) === 0) {
      fetch(folder + "404.html")
        .then(function (answer) { return answer.text(); })
        .then(function (page) { document.open(); document.write(page); document.close(); });
      return;
    }
  }
})();
