// Lint and format in one pass, as the Effect repository does: typescript-eslint's recommended rules,
// React's hook rules for the web app, and dprint (through @effect/eslint-plugin) as the formatter.
// `npm run lint` checks (and `npm test` runs it first); `npm run format` rewrites.
import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import reactHooks from "eslint-plugin-react-hooks"
import globals from "globals"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "data/**", "coverage/**", "**/*.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx,js,mjs}"],
    languageOptions: { globals: { ...globals.node } },
    plugins: { "@effect": effect },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 140,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      // As in the Effect repository: `any` is how variance is spelled at the type level (Schema<any, any>).
      "@typescript-eslint/no-explicit-any": "off",
      // A leading underscore says "unused on purpose" (an interface's argument a implementation ignores).
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        ignoreRestSiblings: true
      }]
    }
  },
  {
    files: ["src/web/**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
      "react-hooks/static-components": "error",
      "react-hooks/refs": "error"
    }
  }
)
