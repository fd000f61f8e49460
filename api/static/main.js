// The page's entry point: start the app (app.js does nothing on import, so its parts can be tested alone).

import { App, problemText } from "./app.js";

const app = new App();
app.boot().catch((err) => {
  app.toast(problemText(app.t, err));
  app.show("lobby");
});
