/** A `Content-Disposition` header for a served file: `filename` for old clients (ASCII), `filename*` with the name as it is. */
export const contentDisposition = (kind: "inline" | "attachment", name: string) =>
  `${kind}; filename="${name.replace(/[^\x20-\x7e]|"/g, "_")}"; filename*=UTF-8''${encodeURIComponent(name)}`
