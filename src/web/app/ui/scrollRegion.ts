/**
 * The frame of a data table that scrolls sideways on a narrow screen: a named region the keyboard
 * can reach and scroll (axe's scrollable-region-focusable), spread on its `<div>`.
 */
export const scrollRegion = { className: "table-scroll", tabIndex: 0, role: "region", "aria-label": "Table (scrolls sideways)" } as const
