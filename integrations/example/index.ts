/** The example integration: a minimal, complete walk through the integration contract. */
export const id = "example"
export const name = "Example"
export const version = "1.0.0"
