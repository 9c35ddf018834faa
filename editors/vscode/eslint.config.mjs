// Lints the extension's TypeScript (`npm run check`, also run by scripts/test when npm is there).
import tseslint from "typescript-eslint";

export default tseslint.config(...tseslint.configs.recommended, {
  files: ["src/**/*.ts"],
  rules: {
    "@typescript-eslint/no-floating-promises": "off",
    eqeqeq: "error",
  },
});
