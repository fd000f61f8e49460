// ESLint for the page (api/static, browser ES modules) and the Node tests (tests/node).
// Run with `npm run lint` (or `npx eslint`); tests/test_lint_js.py runs it in CI.
import js from "@eslint/js";
import globals from "globals";

export default [
  // Not ours: the virtualenv's packages and what builds and runs leave behind (as .gitignore lists).
  { ignores: [".venv/", "build/", "dist/", "artifacts/", "var/", "*.egg-info/"] },
  js.configs.recommended,
  {
    files: ["api/static/**/*.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.browser } },
  },
  {
    files: ["tests/node/**/*.mjs"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      complexity: ["error", 15],
      // `const { signature, ...rest } = doc` is how a copy without some fields is made: those names are not dead
      "no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
  },
];
