import js from "@eslint/js";
import tseslint from "typescript-eslint";
import regexp from "eslint-plugin-regexp";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "build/", ".tools/", "coverage/", "charts/", "config/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ["eslint.config.js"] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "eqeqeq": ["error", "always", { null: "ignore" }],
    },
  },
  {
    // DESIGN §10 "No input stalls the event loop": a pattern that can backtrack or move in
    // super-linear time fails CI, wherever it is (a pattern written for a test today may be
    // applied to user input tomorrow).
    plugins: { regexp },
    rules: {
      "regexp/no-super-linear-backtracking": ["error", { report: "potential" }],
      "regexp/no-super-linear-move": ["error", { report: "potential" }],
      "regexp/no-misleading-capturing-group": ["error", { reportBacktrackingEnds: true }],
    },
  },
  {
    files: ["eslint.config.js"],
    ...tseslint.configs.disableTypeChecked,
  },
);
