/** Standard base64 with its padding, as request bodies carry files (no `data:` prefix, no line breaks). */
export const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
