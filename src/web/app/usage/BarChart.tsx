/**
 * A bar chart drawn with Chart.js, loaded with the usage page only (the chat's bundle carries none
 * of it). Only the parts a bar chart uses are registered. The canvas is an image to assistive
 * technology, described by the table that holds the same figures.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js"
import { useEffect, useRef } from "react"

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend)

export interface BarSeries {
  readonly label: string
  readonly values: ReadonlyArray<number>
  readonly colour: string
}

/** The theme's text colour for the axes and legend, read from the page's CSS variables. */
const themeColour = (name: string, fallback: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback

export const BarChart = ({ labels, series, stacked, label, describedBy, format }: {
  readonly labels: ReadonlyArray<string>
  readonly series: ReadonlyArray<BarSeries>
  readonly stacked?: boolean
  /** What the chart shows, for its accessible name. */
  readonly label: string
  /** The id of the table with the same figures. */
  readonly describedBy: string
  readonly format?: (value: number) => string
}) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const chart = useRef<Chart<"bar"> | undefined>(undefined)

  useEffect(() => {
    if (!canvas.current) return
    const text = themeColour("--muted", "#667085")
    const grid = themeColour("--border", "#d0d5dd")
    const drawn = new Chart(canvas.current, {
      type: "bar",
      data: { labels: [], datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        // Drawn at once: a chart that animates misreports its figures while it grows.
        animation: false,
        color: text,
        scales: {
          x: { stacked, ticks: { color: text }, grid: { display: false } },
          y: {
            stacked,
            beginAtZero: true,
            ticks: { color: text, ...(format ? { callback: (value) => format(Number(value)) } : {}) },
            grid: { color: grid }
          }
        },
        plugins: {
          legend: { labels: { color: text } },
          tooltip: format ? { callbacks: { label: (item) => `${item.dataset.label ?? ""}: ${format(Number(item.raw))}` } } : {}
        }
      }
    })
    chart.current = drawn
    // The theme follows the system's light or dark setting: recolour the axes when it changes.
    const scheme = window.matchMedia("(prefers-color-scheme: dark)")
    const recolour = () => {
      const text = themeColour("--muted", "#667085")
      drawn.options.color = text
      for (const axis of ["x", "y"] as const) {
        const scale = drawn.options.scales?.[axis]
        if (scale?.ticks) scale.ticks.color = text
      }
      const y = drawn.options.scales?.["y"]
      if (y?.grid) y.grid.color = themeColour("--border", "#d0d5dd")
      const legend = drawn.options.plugins?.legend
      if (legend?.labels) legend.labels.color = text
      drawn.update()
    }
    scheme.addEventListener("change", recolour)
    return () => {
      scheme.removeEventListener("change", recolour)
      drawn.destroy()
      chart.current = undefined
    }
  }, [stacked, format])

  useEffect(() => {
    const drawn = chart.current
    if (!drawn) return
    drawn.data.labels = [...labels]
    drawn.data.datasets = series.map((s) => ({
      label: s.label,
      data: [...s.values],
      backgroundColor: s.colour,
      borderColor: s.colour,
      maxBarThickness: 56
    }))
    drawn.update()
  }, [labels, series, stacked, format])

  return (
    <div className="chart-box">
      <canvas ref={canvas} role="img" aria-label={label} aria-describedby={describedBy} />
    </div>
  )
}
