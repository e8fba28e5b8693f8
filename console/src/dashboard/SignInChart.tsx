import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { DashboardData } from "../api.ts";

/**
 * Sign-ups, sign-ins and failed sign-ins per day, drawn by uPlot on a canvas (docs/admin-console.md
 * "Dashboard": why uPlot). It sets styles through the CSSOM, which the console's CSP
 * (`style-src 'self'`) allows. The same figures are in the table below it, for screen readers.
 */
export function SignInChart({ days }: { days: DashboardData["days"] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
    const ink = dark ? "#e6e6e6" : "#1a1a1a";
    const grid = dark ? "#444" : "#ddd";
    const axis = { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } };
    const data: uPlot.AlignedData = [days.map((d) => d.day * 86_400), days.map((d) => d.signUps), days.map((d) => d.signIns), days.map((d) => d.failedSignIns)];
    const chart = new uPlot(
      {
        width: Math.min(el.clientWidth || 800, 1000),
        height: 280,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
        axes: [axis, axis],
        series: [
          {},
          { label: "Sign-ups", stroke: dark ? "#7fb0ff" : "#1f4fd1", width: 2 },
          { label: "Sign-ins", stroke: dark ? "#6fd08c" : "#1e7a3c", width: 2 },
          { label: "Failed sign-ins", stroke: dark ? "#ff8a80" : "#a4161a", width: 2, dash: [6, 4] },
        ],
      },
      data,
      el,
    );
    return () => chart.destroy();
  }, [days]);
  return <div ref={box} className="chart" role="img" aria-label="Sign-ups, sign-ins and failed sign-ins per day, last 30 days (figures in the table below)" />;
}
