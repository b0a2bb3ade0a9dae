<?xml version="1.0" encoding="UTF-8"?>
<!--
  The stylesheet of spmsim's `xalan` program (configs/suite/spec2017-stand-ins.toml):
  an HTML sales report over the company database that xalan-orders.py
  generates. It does an XSLT processor's usual work, as 523.xalancbmk_r's
  transform does: keyed look-ups, sorting, grouping, recursive named
  templates, result-tree fragments turned back into node sets, number
  formatting and string functions. No generate-id() and no dates from the
  clock, so the output depends on the input alone.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:exsl="http://exslt.org/common"
    exclude-result-prefixes="exsl">

  <xsl:output method="html" encoding="UTF-8" indent="yes"/>

  <xsl:key name="product-by-sku" match="product" use="@sku"/>
  <xsl:key name="products-by-category" match="product" use="@category"/>
  <xsl:key name="category-by-code" match="category" use="@code"/>
  <xsl:key name="categories-by-parent" match="category" use="@parent"/>
  <xsl:key name="orders-by-customer" match="order" use="@customer"/>
  <xsl:key name="orders-by-month" match="order" use="substring(@date, 1, 7)"/>
  <xsl:key name="lines-by-sku" match="line" use="@sku"/>
  <xsl:key name="customer-by-id" match="customer" use="@id"/>

  <xsl:variable name="upper" select="'ABCDEFGHIJKLMNOPQRSTUVWXYZ'"/>
  <xsl:variable name="lower" select="'abcdefghijklmnopqrstuvwxyz'"/>

  <!-- Every customer's orders, lines and spending, as a node set. -->
  <xsl:variable name="customer-totals-rtf">
    <xsl:for-each select="/company/customers/customer">
      <xsl:variable name="orders" select="key('orders-by-customer', @id)[@status != 'cancelled']"/>
      <xsl:variable name="spent">
        <xsl:call-template name="lines-total">
          <xsl:with-param name="lines" select="$orders/line"/>
        </xsl:call-template>
      </xsl:variable>
      <c id="{@id}" region="{@region}" tier="{@tier}" orders="{count($orders)}"
         lines="{count($orders/line)}" total="{$spent}"/>
    </xsl:for-each>
  </xsl:variable>
  <xsl:variable name="customer-totals" select="exsl:node-set($customer-totals-rtf)/c"/>

  <xsl:template match="/">
    <html>
      <head><title>Sales report: <xsl:value-of select="company/@name"/></title></head>
      <body>
        <h1>Sales report of <xsl:value-of select="company/@name"/></h1>
        <xsl:apply-templates select="company/categories" mode="tree"/>
        <xsl:apply-templates select="company/regions"/>
        <xsl:call-template name="months"/>
        <xsl:apply-templates select="company/products" mode="by-category"/>
        <xsl:call-template name="returns"/>
      </body>
    </html>
  </xsl:template>

  <!-- The category tree, each category with its path and product count. -->
  <xsl:template match="categories" mode="tree">
    <h2>Categories</h2>
    <ul>
      <xsl:apply-templates select="category[not(@parent)]" mode="tree">
        <xsl:sort select="@name"/>
      </xsl:apply-templates>
    </ul>
  </xsl:template>

  <xsl:template match="category" mode="tree">
    <li>
      <xsl:call-template name="category-path">
        <xsl:with-param name="code" select="@code"/>
      </xsl:call-template>
      <xsl:text> (</xsl:text>
      <xsl:value-of select="count(key('products-by-category', @code))"/>
      <xsl:text> products)</xsl:text>
      <xsl:variable name="children" select="key('categories-by-parent', @code)"/>
      <xsl:if test="$children">
        <ul>
          <xsl:apply-templates select="$children" mode="tree">
            <xsl:sort select="@name"/>
          </xsl:apply-templates>
        </ul>
      </xsl:if>
    </li>
  </xsl:template>

  <xsl:template name="category-path">
    <xsl:param name="code"/>
    <xsl:variable name="c" select="key('category-by-code', $code)"/>
    <xsl:if test="$c/@parent">
      <xsl:call-template name="category-path">
        <xsl:with-param name="code" select="$c/@parent"/>
      </xsl:call-template>
      <xsl:text> / </xsl:text>
    </xsl:if>
    <xsl:value-of select="$c/@name"/>
  </xsl:template>

  <!-- Per region: its customers ranked by spending. -->
  <xsl:template match="regions">
    <h2>Regions</h2>
    <xsl:for-each select="region">
      <xsl:sort select="@name"/>
      <xsl:variable name="here" select="$customer-totals[@region = current()/@code]"/>
      <h3><xsl:value-of select="@name"/> (<xsl:value-of select="@code"/>)</h3>
      <p>
        <xsl:value-of select="count($here)"/> customers,
        <xsl:value-of select="count($here[@tier = 'gold'])"/> gold,
        <xsl:value-of select="sum($here/@orders)"/> orders, spending
        <xsl:value-of select="format-number(sum($here/@total), '#,##0.00')"/>
        <xsl:if test="$here">
          (mean <xsl:value-of select="format-number(sum($here/@total) div count($here), '#,##0.00')"/>)
        </xsl:if>
      </p>
      <table>
        <tr><th>#</th><th>Customer</th><th>Since</th><th>Orders</th><th>Lines</th><th>Spent</th></tr>
        <xsl:for-each select="$here">
          <xsl:sort select="@total" data-type="number" order="descending"/>
          <xsl:sort select="@id"/>
          <xsl:if test="position() &lt;= 20">
            <xsl:variable name="who" select="key('customer-by-id', @id)"/>
            <tr>
              <td><xsl:value-of select="position()"/></td>
              <td>
                <xsl:value-of select="translate($who/name/last, $lower, $upper)"/>
                <xsl:text>, </xsl:text>
                <xsl:value-of select="$who/name/first"/>
              </td>
              <td><xsl:value-of select="substring($who/@since, 1, 4)"/></td>
              <td><xsl:value-of select="@orders"/></td>
              <td><xsl:value-of select="@lines"/></td>
              <td><xsl:value-of select="format-number(@total, '#,##0.00')"/></td>
            </tr>
          </xsl:if>
        </xsl:for-each>
      </table>
    </xsl:for-each>
  </xsl:template>

  <!-- Orders grouped by month (each month's first order stands for it). -->
  <xsl:template name="months">
    <h2>Months</h2>
    <table>
      <tr><th>Month</th><th>Orders</th><th>Lines</th><th>Units</th><th>Revenue</th><th>Returned</th></tr>
      <xsl:for-each select="/company/orders/order[count(. | key('orders-by-month', substring(@date, 1, 7))[1]) = 1]">
        <xsl:sort select="@date"/>
        <xsl:variable name="month" select="key('orders-by-month', substring(@date, 1, 7))"/>
        <xsl:variable name="revenue">
          <xsl:call-template name="lines-total">
            <xsl:with-param name="lines" select="$month[@status != 'cancelled']/line"/>
          </xsl:call-template>
        </xsl:variable>
        <tr>
          <td><xsl:value-of select="substring(@date, 1, 7)"/></td>
          <td><xsl:value-of select="count($month)"/></td>
          <td><xsl:value-of select="count($month/line)"/></td>
          <td><xsl:value-of select="sum($month/line/@qty)"/></td>
          <td><xsl:value-of select="format-number($revenue, '#,##0.00')"/></td>
          <td><xsl:value-of select="count($month[@status = 'returned'])"/></td>
        </tr>
      </xsl:for-each>
    </table>
  </xsl:template>

  <!-- Products by category, with sales and a shortened description. -->
  <xsl:template match="products" mode="by-category">
    <h2>Products</h2>
    <xsl:for-each select="/company/categories/category">
      <xsl:sort select="@name"/>
      <xsl:variable name="items" select="key('products-by-category', @code)"/>
      <xsl:if test="$items">
        <h3><xsl:number value="position()" format="1. "/><xsl:value-of select="@name"/></h3>
        <table>
          <xsl:for-each select="$items">
            <xsl:sort select="name"/>
            <xsl:variable name="sold" select="key('lines-by-sku', @sku)"/>
            <xsl:variable name="revenue">
              <xsl:call-template name="lines-total">
                <xsl:with-param name="lines" select="$sold"/>
              </xsl:call-template>
            </xsl:variable>
            <tr>
              <td><xsl:number value="position()" format="a"/></td>
              <td><xsl:value-of select="@sku"/></td>
              <td>
                <xsl:call-template name="capitalise">
                  <xsl:with-param name="text" select="normalize-space(name)"/>
                </xsl:call-template>
              </td>
              <td><xsl:value-of select="format-number(@price, '0.00')"/></td>
              <td><xsl:value-of select="sum($sold/@qty)"/></td>
              <td><xsl:value-of select="format-number($revenue, '#,##0.00')"/></td>
              <td>
                <xsl:call-template name="first-words">
                  <xsl:with-param name="text" select="normalize-space(description)"/>
                  <xsl:with-param name="count" select="10"/>
                </xsl:call-template>
              </td>
            </tr>
          </xsl:for-each>
        </table>
      </xsl:if>
    </xsl:for-each>
  </xsl:template>

  <!-- Returned orders in full. -->
  <xsl:template name="returns">
    <h2>Returned orders</h2>
    <xsl:for-each select="/company/orders/order[@status = 'returned']">
      <xsl:sort select="@customer"/>
      <xsl:sort select="@date" order="descending"/>
      <xsl:variable name="who" select="key('customer-by-id', @customer)"/>
      <p>
        <xsl:number value="position()" format="(i) "/>
        <xsl:value-of select="@id"/> of <xsl:value-of select="@date"/> by
        <xsl:value-of select="concat($who/name/first, ' ', $who/name/last)"/>:
        <xsl:for-each select="line">
          <xsl:variable name="p" select="key('product-by-sku', @sku)"/>
          <xsl:value-of select="@qty"/> x <xsl:value-of select="$p/name"/>
          <xsl:if test="@discount != 0"> (less <xsl:value-of select="@discount"/>%)</xsl:if>
          <xsl:if test="position() != last()">; </xsl:if>
        </xsl:for-each>
      </p>
    </xsl:for-each>
  </xsl:template>

  <!-- What a set of order lines is worth: quantity times price, less the
       discount, summed by halves so that the recursion stays shallow. -->
  <xsl:template name="lines-total">
    <xsl:param name="lines"/>
    <xsl:variable name="n" select="count($lines)"/>
    <xsl:choose>
      <xsl:when test="$n = 0">0</xsl:when>
      <xsl:when test="$n = 1">
        <xsl:value-of select="$lines/@qty * key('product-by-sku', $lines/@sku)/@price * (100 - $lines/@discount) div 100"/>
      </xsl:when>
      <xsl:otherwise>
        <xsl:variable name="half" select="floor($n div 2)"/>
        <xsl:variable name="first">
          <xsl:call-template name="lines-total">
            <xsl:with-param name="lines" select="$lines[position() &lt;= $half]"/>
          </xsl:call-template>
        </xsl:variable>
        <xsl:variable name="second">
          <xsl:call-template name="lines-total">
            <xsl:with-param name="lines" select="$lines[position() &gt; $half]"/>
          </xsl:call-template>
        </xsl:variable>
        <xsl:value-of select="$first + $second"/>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>

  <!-- Every word with a capital first letter. -->
  <xsl:template name="capitalise">
    <xsl:param name="text"/>
    <xsl:variable name="word" select="substring-before(concat($text, ' '), ' ')"/>
    <xsl:value-of select="concat(translate(substring($word, 1, 1), $lower, $upper), substring($word, 2))"/>
    <xsl:variable name="rest" select="substring-after($text, ' ')"/>
    <xsl:if test="$rest">
      <xsl:text> </xsl:text>
      <xsl:call-template name="capitalise">
        <xsl:with-param name="text" select="$rest"/>
      </xsl:call-template>
    </xsl:if>
  </xsl:template>

  <!-- The first COUNT words of TEXT, with an ellipsis if there were more. -->
  <xsl:template name="first-words">
    <xsl:param name="text"/>
    <xsl:param name="count"/>
    <xsl:choose>
      <xsl:when test="$count = 0">
        <xsl:if test="$text"> ...</xsl:if>
      </xsl:when>
      <xsl:when test="contains($text, ' ')">
        <xsl:value-of select="substring-before($text, ' ')"/>
        <xsl:if test="$count &gt; 1"><xsl:text> </xsl:text></xsl:if>
        <xsl:call-template name="first-words">
          <xsl:with-param name="text" select="substring-after($text, ' ')"/>
          <xsl:with-param name="count" select="$count - 1"/>
        </xsl:call-template>
      </xsl:when>
      <xsl:otherwise>
        <xsl:value-of select="$text"/>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>

</xsl:stylesheet>
