// The sign-in page: remembers the page the visitor asked for (its #/... part, which the form's
// POST and redirect lose), so that app.js opens it once signed in.
"use strict";
if (location.hash.length > 2) sessionStorage.setItem("arbiter-return", location.hash);
