/** Cairn's release: the OpenAPI document, `/health`, the CLI's `--version` and `cairn status` all say this one. */
export const cairnVersion = "0.1.0"
