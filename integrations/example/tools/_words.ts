/** A helper module: files starting with "_" are not loaded as tools. */
export const words = (text: string): Array<string> => text.split(/\s+/).filter((word) => word.length > 0)
