/**
 * The one way a secret is shown in an answer or a log: `****`, followed by its last four characters
 * when the secret is long enough (16 or more) that they give nothing away. A masked value sent back
 * unchanged in an update means "keep the stored one", so `isMaskOf` is the only comparison.
 */
export const MASK = "****"

export const mask = (secret: string): string => (secret.length >= 16 ? `${MASK}${secret.slice(-4)}` : MASK)

/** Whether `sent` is what an answer showed of `stored` (the client sent the mask back). */
export const isMaskOf = (sent: string, stored: string | undefined): boolean => stored !== undefined && sent === mask(stored)
