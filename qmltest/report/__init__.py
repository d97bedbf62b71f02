"""Report views: one table of formats (views: JSON, CSV, JUnit, Stryker, HTML), the JUnit and Stryker
documents and the HTML pages; the writers they share are `qmltest.util.writers`."""
